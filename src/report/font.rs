//! The embedded chart font.
//!
//! plotters' `ab_glyph` text backend never looks at system fonts, so a font
//! must be registered before anything with text is drawn. DejaVu Sans
//! (Bitstream Vera license, see `data/fonts/LICENSE-DejaVu.txt`) is compiled
//! into the binary and registered once as the `"sans-serif"` family.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

use super::DrawError;

/// The family name charts use for all their text.
pub(crate) const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../data/fonts/DejaVuSans.ttf");

/// Registers the embedded font with plotters (only the first call does any
/// work). Fails if the font data cannot be parsed.
pub(crate) fn ensure_registered() -> Result<(), DrawError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok());
    if ok {
        Ok(())
    } else {
        Err(DrawError::Font)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_font_registers() {
        assert!(DEJAVU_SANS.len() > 100_000);
        ensure_registered().unwrap();
        ensure_registered().unwrap();
    }
}
