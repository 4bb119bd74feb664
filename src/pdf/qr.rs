//! A QR code drawn as filled squares, one per dark module.

use qrcode::{Color, EcLevel, QrCode};

use super::Canvas;

impl Canvas {
    /// `payload` as a QR code `side` points wide with its top left corner at
    /// (x, current y); the quiet zone is left to the caller's margins. False when the
    /// payload is too long for any QR code (nothing is drawn).
    pub fn qr(&mut self, x: f32, side: f32, payload: &str) -> bool {
        // Level M, as printed CFDI usually carry: readable with some smudging.
        let Ok(code) = QrCode::with_error_correction_level(payload, EcLevel::M) else {
            return false;
        };
        let width = code.width();
        let module = side / width as f32;
        let top = self.y;
        for (i, color) in code.to_colors().into_iter().enumerate() {
            if color == Color::Dark {
                let (col, row) = ((i % width) as f32, (i / width) as f32);
                self.square(x + col * module, top - (row + 1.0) * module, module);
            }
        }
        self.fill();
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dark_modules_are_drawn_as_one_filled_path() {
        let mut canvas = Canvas::default();
        assert!(canvas.qr(40.0, 100.0, "https://example.com/?id=1"));
        let pdf = canvas.finish(&super::super::Info {
            title: "t",
            producer: "p",
            created: None,
        });
        let text = String::from_utf8_lossy(&pdf);
        let squares = text.matches(" re\n").count();
        let dark = QrCode::with_error_correction_level("https://example.com/?id=1", EcLevel::M)
            .unwrap()
            .to_colors()
            .into_iter()
            .filter(|c| *c == Color::Dark)
            .count();
        assert_eq!(squares, dark);
        assert_eq!(text.matches("\nf\n").count(), 1);
    }
}
