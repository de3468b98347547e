//! What a kind of player is ([`PlayerKind`]: its names, its options and
//! its construction) and the macro that turns the list of kinds in
//! `mod.rs` into [`GamePlayerSpec`](super::GamePlayerSpec): its parsing,
//! its text and its building all dispatch here, so no other file names
//! every kind.

use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::{Player, SearchError};
use std::fmt;
use std::sync::Arc;

/// One kind of player: the spec it is written as (its [`fmt::Display`]
/// writes the spec back), the names that spec starts with, and how a spec
/// becomes a player for any game.
pub trait PlayerKind: Clone + fmt::Debug + fmt::Display + PartialEq + Sized {
    /// The names its specs start with (`greedy` and `greedy+` share one
    /// kind).
    const NAMES: &'static [&'static str];

    /// The spec `text`, named `name` (one of [`Self::NAMES`]), with
    /// `args` the text after its `:`, if any; read with
    /// [`Options`](super::Options) so that every kind refuses bad options
    /// alike.
    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError>;

    /// Its player for game `G` in `ctx`; a game it does not play is an
    /// error naming both. The player's [`Player::name`] is the spec with
    /// the evaluator filled in.
    fn build<G: GameSupport>(&self, ctx: &PlayerContext)
        -> Result<Arc<dyn Player<G>>, SearchError>;
}

/// `file: Variant(SpecType),` a line per kind: declares the kind's file,
/// re-exports its spec type and makes [`GamePlayerSpec`](super::GamePlayerSpec)
/// with a variant for it.
macro_rules! player_kinds {
    ($($file:ident: $variant:ident($kind:ident),)*) => {
        $(
            mod $file;
            pub use $file::$kind;
        )*

        /// A parsed player spec, a variant per kind of player (see the
        /// module docs for the grammar).
        #[derive(Clone, Debug, PartialEq)]
        pub enum GamePlayerSpec {
            $(
                #[doc = concat!("`", stringify!($file), "`: [`", stringify!($kind), "`].")]
                $variant($kind),
            )*
        }

        impl GamePlayerSpec {
            /// The names specs start with, for help and errors.
            pub fn names() -> Vec<&'static str> {
                let mut names = Vec::new();
                $(names.extend_from_slice(<$kind as PlayerKind>::NAMES);)*
                names
            }

            /// Its player for game `G` in `ctx`.
            pub(super) fn build_for<G: $crate::games::GameSupport>(
                &self,
                ctx: &$crate::search::evaluators::PlayerContext,
            ) -> Result<std::sync::Arc<dyn $crate::search::Player<G>>, $crate::search::SearchError> {
                match self {
                    $(GamePlayerSpec::$variant(kind) => kind.build::<G>(ctx),)*
                }
            }
        }

        impl std::str::FromStr for GamePlayerSpec {
            type Err = $crate::search::SearchError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let (name, args) = match text.split_once(':') {
                    Some((name, args)) => (name.trim(), Some(args)),
                    None => (text.trim(), None),
                };
                $(
                    if <$kind as PlayerKind>::NAMES.contains(&name) {
                        return <$kind as PlayerKind>::parse(text, name, args)
                            .map(GamePlayerSpec::$variant);
                    }
                )*
                Err(grammar::bad(
                    text,
                    format!(
                        "unknown player '{name}'; expected one of {}",
                        GamePlayerSpec::names().join(", ")
                    ),
                ))
            }
        }

        impl std::fmt::Display for GamePlayerSpec {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(GamePlayerSpec::$variant(kind) => std::fmt::Display::fmt(kind, f),)*
                }
            }
        }
    };
}
