//! Reasons a game is skipped (the keys of
//! [`FileSummary::skipped`](super::FileSummary::skipped)).

/// The line does not have as many fields as the header.
pub const MALFORMED_ROW: &str = "malformed row";
/// A setup turn is missing, unreadable or breaks the setup rules.
pub const BAD_SETUP: &str = "bad setup";
/// A turn label is unreadable or not the one expected next.
pub const BAD_TURN_LABEL: &str = "bad turn label";
/// A step or capture token is not `<piece><square><n|s|e|w|x>`.
pub const UNPARSEABLE_TOKEN: &str = "unparseable token";
/// A move the rules engine refuses.
pub const ILLEGAL_MOVE: &str = "illegal move";
/// The board's result disagrees with the recorded one.
pub const CONTRADICTS_RULES: &str = "result contradicts the rules";
/// Kept out by [`super::ImportOptions::min_rating`] (not an error).
pub const BELOW_MIN_RATING: &str = "filtered: rating below minimum";
/// Kept out by [`super::ImportOptions::terminations`] (not an error).
pub const TERMINATION_NOT_KEPT: &str = "filtered: termination not kept";
