//! Screenshots: each widget drawn as a box with its text in a scaled 8×8
//! bitmap font, so that screens are legible and easy to tell apart.

use font8x8::{BASIC_FONTS, UnicodeFonts};
use image::{ImageEncoder, Rgb, RgbImage, codecs::png::PngEncoder};

use super::folio::{SCREEN_HEIGHT, SCREEN_WIDTH};
use super::screen::{Role, Widget};
use uatu_device::model::{Bounds, Screenshot};

const BACKGROUND: [u8; 3] = [244, 245, 247];
const WHITE: [u8; 3] = [255, 255, 255];
const INK: [u8; 3] = [33, 33, 33];
const MUTED: [u8; 3] = [97, 97, 97];
const HINT: [u8; 3] = [158, 158, 158];
const BORDER: [u8; 3] = [189, 189, 189];
const ERROR: [u8; 3] = [198, 40, 40];
const CREDIT: [u8; 3] = [27, 120, 40];
const DISABLED: [u8; 3] = [176, 176, 176];

/// Why a screenshot could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The scale asked for, outside 0.05 to 4 (or not a number): smaller screenshots are
    /// unreadable, larger ones only cost memory.
    #[error("screenshot scale {0} is out of range (0.05 to 4)")]
    Scale(f32),
    /// The PNG encoder failed on the drawn image.
    #[error("cannot encode the screenshot as PNG: {0}")]
    Encode(#[from] image::ImageError),
}

/// Checks a screenshot scale before anything is rendered with it.
pub fn check_scale(scale: f32) -> Result<(), RenderError> {
    if scale.is_finite() && (0.05..=4.0).contains(&scale) {
        Ok(())
    } else {
        Err(RenderError::Scale(scale))
    }
}

/// Renders the widget tree as a PNG at `scale` of the 1080×2400 screen.
pub(crate) fn screenshot(root: &Widget, scale: f32) -> Result<Screenshot, RenderError> {
    check_scale(scale)?;
    let width = ((SCREEN_WIDTH as f32 * scale).round() as u32).max(1);
    let height = ((SCREEN_HEIGHT as f32 * scale).round() as u32).max(1);
    let mut canvas = Canvas {
        image: RgbImage::from_pixel(width, height, Rgb(BACKGROUND)),
        scale,
    };
    canvas.draw(root);
    let mut png = Vec::new();
    PngEncoder::new(&mut png).write_image(
        canvas.image.as_raw(),
        width,
        height,
        image::ExtendedColorType::Rgb8,
    )?;
    Ok(Screenshot { png, width, height })
}

struct Canvas {
    image: RgbImage,
    scale: f32,
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Centre,
    Right,
}

/// Balances on account cards sit at the right edge, as in a real list.
fn money_align(widget: &Widget) -> Align {
    if widget.node.id.ends_with("account_balance") {
        Align::Right
    } else {
        Align::Left
    }
}

impl Canvas {
    fn draw(&mut self, widget: &Widget) {
        let at = widget.node.bounds;
        let accent = widget.accent;
        match widget.role {
            Role::Root => self.fill(at, BACKGROUND),
            Role::Launcher => {
                self.fill(at, [38, 50, 56]);
                self.text(
                    Bounds {
                        top: 300,
                        bottom: 420,
                        ..at
                    },
                    "Home screen",
                    40,
                    [207, 216, 220],
                    Align::Centre,
                );
            }
            Role::Toolbar => {
                self.fill(at, accent);
                self.fill(
                    Bounds {
                        bottom: at.top + 70,
                        ..at
                    },
                    darker(accent),
                );
            }
            Role::ToolbarTitle => self.text(at, &widget.node.text, 48, WHITE, Align::Left),
            Role::ToolbarButton => {
                self.outline(at, WHITE, 3);
                let label = if widget.node.desc == "Back" {
                    "<"
                } else {
                    widget.node.text.as_str()
                };
                self.text(at, label, 36, WHITE, Align::Centre);
            }
            Role::Title => self.text(at, &widget.node.text, 80, INK, Align::Left),
            Role::Text => self.text(at, &widget.node.text, 44, INK, Align::Left),
            Role::Muted => self.text(at, &widget.node.text, 36, MUTED, Align::Left),
            Role::Error => {
                let message = format!("! {}", widget.node.text);
                self.text(at, &message, 36, ERROR, Align::Left);
            }
            Role::Credit => self.text(at, &widget.node.text, 44, CREDIT, money_align(widget)),
            Role::Debit => self.text(at, &widget.node.text, 44, ERROR, money_align(widget)),
            Role::Field => {
                self.fill(at, WHITE);
                let (border, width) = if widget.node.focused {
                    (accent, 6)
                } else {
                    (BORDER, 3)
                };
                self.outline(at, border, width);
                let inner = inset(at, 24);
                if widget.node.text.is_empty() {
                    self.text(inner, widget.hint, 44, HINT, Align::Left);
                } else {
                    // The font has no bullet: show a masked password as asterisks.
                    let shown = widget.node.text.replace('•', "*");
                    self.text(inner, &shown, 44, INK, Align::Left);
                }
            }
            Role::Button => {
                let colour = if widget.node.enabled { accent } else { DISABLED };
                self.fill(at, colour);
                self.text(at, &widget.node.text, 48, WHITE, Align::Centre);
            }
            Role::Card => {
                self.fill(at, WHITE);
                self.outline(at, BORDER, 2);
            }
            Role::Row => {
                self.fill(at, WHITE);
                self.fill(
                    Bounds {
                        top: at.bottom - 3,
                        ..at
                    },
                    BORDER,
                );
            }
            Role::List | Role::RadioGroup => {}
            Role::Radio => {
                let checked = widget.node.checked;
                self.fill(at, if checked { accent } else { WHITE });
                self.outline(at, if checked { accent } else { BORDER }, 3);
                let label = format!("{} {}", if checked { "(*)" } else { "( )" }, widget.node.text);
                self.text(at, &label, 36, if checked { WHITE } else { INK }, Align::Centre);
            }
            Role::Icon => {
                self.fill(
                    inset(
                        Bounds {
                            bottom: at.bottom - 60,
                            ..at
                        },
                        30,
                    ),
                    [0, 121, 107],
                );
                self.text(
                    Bounds {
                        top: at.top + 60,
                        bottom: at.top + 200,
                        ..at
                    },
                    "F",
                    96,
                    WHITE,
                    Align::Centre,
                );
                self.text(
                    Bounds {
                        top: at.bottom - 60,
                        ..at
                    },
                    &widget.node.text,
                    40,
                    WHITE,
                    Align::Centre,
                );
            }
            Role::Progress => {
                self.outline(at, accent, 10);
                self.fill(inset(at, 35), accent);
            }
        }
        for child in &widget.children {
            self.draw(child);
        }
    }

    fn px(&self, device: i32) -> i64 {
        (device as f32 * self.scale).round() as i64
    }

    fn fill(&mut self, at: Bounds, colour: [u8; 3]) {
        let (width, height) = (self.image.width() as i64, self.image.height() as i64);
        let (left, right) = (
            self.px(at.left).clamp(0, width),
            self.px(at.right).clamp(0, width),
        );
        let (top, bottom) = (
            self.px(at.top).clamp(0, height),
            self.px(at.bottom).clamp(0, height),
        );
        for y in top..bottom {
            for x in left..right {
                self.image.put_pixel(x as u32, y as u32, Rgb(colour));
            }
        }
    }

    fn outline(&mut self, at: Bounds, colour: [u8; 3], width: i32) {
        let width = width.max((1.0 / self.scale).ceil() as i32);
        self.fill(
            Bounds {
                bottom: at.top + width,
                ..at
            },
            colour,
        );
        self.fill(
            Bounds {
                top: at.bottom - width,
                ..at
            },
            colour,
        );
        self.fill(
            Bounds {
                right: at.left + width,
                ..at
            },
            colour,
        );
        self.fill(
            Bounds {
                left: at.right - width,
                ..at
            },
            colour,
        );
    }

    /// Draws one line of text of about `size` device pixels, cut with ".." to fit.
    fn text(&mut self, at: Bounds, text: &str, size: i32, colour: [u8; 3], align: Align) {
        if text.is_empty() {
            return;
        }
        let factor = ((size as f32 * self.scale / 8.0).round() as i64).max(1);
        let glyph = 8 * factor;
        let (left, right) = (self.px(at.left), self.px(at.right));
        let (top, bottom) = (self.px(at.top), self.px(at.bottom));
        let fits = ((right - left) / glyph).max(0) as usize;
        let mut chars: Vec<char> = text.chars().collect();
        if chars.len() > fits {
            chars.truncate(fits.saturating_sub(2));
            chars.extend(['.', '.']);
        }
        let line = chars.len() as i64 * glyph;
        let x0 = match align {
            Align::Left => left,
            Align::Centre => left + ((right - left) - line) / 2,
            Align::Right => right - line,
        };
        let y0 = top + ((bottom - top) - glyph) / 2;
        for (index, c) in chars.iter().enumerate() {
            let rows = BASIC_FONTS
                .get(*c)
                .or_else(|| BASIC_FONTS.get('?'))
                .unwrap_or([0; 8]);
            let gx = x0 + index as i64 * glyph;
            for (row, bits) in rows.iter().enumerate() {
                for column in 0..8 {
                    if bits & (1 << column) != 0 {
                        self.block(gx + column * factor, y0 + row as i64 * factor, factor, colour);
                    }
                }
            }
        }
    }

    fn block(&mut self, x: i64, y: i64, size: i64, colour: [u8; 3]) {
        let (width, height) = (self.image.width() as i64, self.image.height() as i64);
        for py in y.max(0)..(y + size).min(height) {
            for px in x.max(0)..(x + size).min(width) {
                self.image.put_pixel(px as u32, py as u32, Rgb(colour));
            }
        }
    }
}

fn darker(colour: [u8; 3]) -> [u8; 3] {
    colour.map(|c| (c as u16 * 3 / 4) as u8)
}

fn inset(at: Bounds, by: i32) -> Bounds {
    Bounds {
        left: at.left + by,
        top: at.top + by,
        right: at.right - by,
        bottom: at.bottom - by,
    }
}
