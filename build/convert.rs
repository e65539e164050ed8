//! Pixels to GBA graphics: 4bpp tiles and a 16-colour palette, with the checks that make bad art fail the build.
//!
//! Plain `std`, no PNG decoding (build.rs does that), so the tests below run on the host without cargo:
//! `rustc --edition 2024 --test build/convert.rs -o target/convert-tests && target/convert-tests`

/// An image as 8-bit RGBA pixels, row by row.
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<[u8; 4]>,
}

/// What the GBA gets: tiles of 8x8 pixels (8 words, a word a row, the leftmost pixel in the low nibble) and the
/// palette they index, entry 0 being transparent.
#[derive(Debug, PartialEq)]
pub struct Converted {
    pub tiles: Vec<[u32; 8]>,
    /// BGR555 colours; entry 0 (transparent) is 0. At most 16 entries.
    pub palette: Vec<u16>,
}

/// The OBJ shape (attribute 0 bits 14-15) and size (attribute 1 bits 14-15) of a sprite, GBATEK "OBJ Attribute 0/1".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjShape {
    /// 0 square, 1 horizontal, 2 vertical.
    pub shape: u8,
    pub size: u8,
}

/// GBATEK's OBJ shape/size table: (width, height) by shape, then by size 0..3.
const SHAPES: [[(usize, usize); 4]; 3] = [
    [(8, 8), (16, 16), (32, 32), (64, 64)],
    [(16, 8), (32, 8), (32, 16), (64, 32)],
    [(8, 16), (8, 32), (16, 32), (32, 64)],
];

/// The shape and size of a `width` x `height` sprite, or why the hardware cannot draw one.
pub fn obj_shape(width: usize, height: usize) -> Result<ObjShape, String> {
    for (shape, sizes) in SHAPES.iter().enumerate() {
        if let Some(size) = sizes.iter().position(|&wh| wh == (width, height)) {
            return Ok(ObjShape { shape: shape as u8, size: size as u8 });
        }
    }
    let valid: Vec<String> = SHAPES.iter().flatten().map(|(w, h)| format!("{w}x{h}")).collect();
    Err(format!("{width}x{height} is not a GBA sprite size; the hardware draws {}", valid.join(", ")))
}

/// Cuts `image` into frames of `frame_w` x `frame_h` (left to right, then top to bottom), each into 8x8 tiles in
/// the order of the 1D OBJ mapping (row by row), and builds the palette: transparent, then the colours from the
/// darkest to the brightest, so that the same art always gets the same indices.
pub fn convert(image: &Image, frame_w: usize, frame_h: usize) -> Result<Converted, String> {
    if !frame_w.is_multiple_of(8) || !frame_h.is_multiple_of(8) {
        return Err(format!("frames of {frame_w}x{frame_h} are not whole 8x8 tiles"));
    }
    if !image.width.is_multiple_of(frame_w) || !image.height.is_multiple_of(frame_h) {
        return Err(format!(
            "the image is {}x{}, not a whole number of {frame_w}x{frame_h} frames",
            image.width, image.height
        ));
    }

    // Every pixel as a palette key: None when transparent, else its BGR555 colour.
    let mut colours: Vec<u16> = Vec::new();
    let mut keys = Vec::with_capacity(image.pixels.len());
    for (i, &[r, g, b, a]) in image.pixels.iter().enumerate() {
        let key = match a {
            0 => None,
            255 => Some(bgr555(r, g, b)),
            _ => {
                let (x, y) = (i % image.width, i / image.width);
                return Err(format!("pixel ({x}, {y}) is partly transparent (alpha {a}); use alpha 0 or 255"));
            }
        };
        if let Some(colour) = key
            && !colours.contains(&colour)
        {
            colours.push(colour);
        }
        keys.push(key);
    }
    if colours.len() > 15 {
        let list: Vec<String> = colours.iter().map(|&c| rgb_hex(c)).collect();
        return Err(format!(
            "{} colours besides transparent, but a 4bpp sprite has at most 15: {}",
            colours.len(),
            list.join(" ")
        ));
    }
    colours.sort_by_key(|&c| (luma(c), c));
    let mut palette = vec![0];
    palette.extend(&colours);
    let index = |key: Option<u16>| key.map_or(0, |c| palette.iter().position(|&p| p == c).unwrap() as u32);

    let mut tiles = Vec::new();
    for frame_top in (0..image.height).step_by(frame_h) {
        for frame_left in (0..image.width).step_by(frame_w) {
            for tile_top in (frame_top..frame_top + frame_h).step_by(8) {
                for tile_left in (frame_left..frame_left + frame_w).step_by(8) {
                    let mut tile = [0u32; 8];
                    for (y, row) in tile.iter_mut().enumerate() {
                        for x in 0..8 {
                            *row |= index(keys[(tile_top + y) * image.width + tile_left + x]) << (4 * x);
                        }
                    }
                    tiles.push(tile);
                }
            }
        }
    }
    Ok(Converted { tiles, palette })
}

/// The GBA's colour format: 5 bits a channel, red in the low bits (GBATEK "LCD Color Palettes").
fn bgr555(r: u8, g: u8, b: u8) -> u16 {
    u16::from(r >> 3) | (u16::from(g >> 3) << 5) | (u16::from(b >> 3) << 10)
}

fn channels(colour: u16) -> (u32, u32, u32) {
    (u32::from(colour & 31), u32::from((colour >> 5) & 31), u32::from(colour >> 10))
}

/// Perceived brightness (Rec. 601 weights), to order a palette from dark to bright.
fn luma(colour: u16) -> u32 {
    let (r, g, b) = channels(colour);
    299 * r + 587 * g + 114 * b
}

/// `#rrggbb` of a BGR555 colour, as an artist would look it up.
fn rgb_hex(colour: u16) -> String {
    let (r, g, b) = channels(colour);
    format!("#{:02x}{:02x}{:02x}", r << 3, g << 3, b << 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAR: [u8; 4] = [0, 0, 0, 0];
    const RED: [u8; 4] = [255, 0, 0, 255];
    const WHITE: [u8; 4] = [255, 255, 255, 255];

    fn filled(width: usize, height: usize, pixel: [u8; 4]) -> Image {
        Image { width, height, pixels: vec![pixel; width * height] }
    }

    #[test]
    fn every_size_of_the_gbatek_table_is_a_sprite_and_others_are_not() {
        assert_eq!(obj_shape(8, 8), Ok(ObjShape { shape: 0, size: 0 }));
        assert_eq!(obj_shape(64, 32), Ok(ObjShape { shape: 1, size: 3 }));
        assert_eq!(obj_shape(8, 32), Ok(ObjShape { shape: 2, size: 1 }));
        let error = obj_shape(24, 16).unwrap_err();
        assert!(error.starts_with("24x16 is not a GBA sprite size"), "{error}");
        assert!(obj_shape(64, 8).is_err() && obj_shape(16, 64).is_err() && obj_shape(0, 0).is_err());
    }

    #[test]
    fn pixels_pack_left_to_right_from_the_low_nibble_and_palette_goes_dark_to_bright() {
        let mut image = filled(8, 8, CLEAR);
        image.pixels[0] = WHITE;
        image.pixels[1] = RED;
        image.pixels[63] = RED;
        let out = convert(&image, 8, 8).unwrap();
        assert_eq!(out.palette, vec![0, 0x001F, 0x7FFF]);
        assert_eq!(out.tiles, vec![[0x12, 0, 0, 0, 0, 0, 0, 0x1000_0000]]);
    }

    #[test]
    fn tiles_follow_the_1d_mapping_frame_after_frame() {
        // Two 16x8 frames side by side: tiles are frame 0 left, frame 0 right, frame 1 left, frame 1 right.
        // Tile k (by x) gets k red pixels in its first row, so each tile's first word tells which one it is.
        let mut image = filled(32, 8, CLEAR);
        for tile in 1..4 {
            for x in 0..tile {
                image.pixels[8 * tile + x] = RED;
            }
        }
        let out = convert(&image, 16, 8).unwrap();
        assert_eq!(out.tiles.len(), 4);
        assert_eq!(out.tiles.iter().map(|t| t[0]).collect::<Vec<_>>(), vec![0, 0x1, 0x11, 0x111]);
    }

    #[test]
    fn sixteen_colours_fail_and_name_them() {
        let mut image = filled(16, 8, CLEAR);
        for i in 0..16 {
            image.pixels[i] = [i as u8 * 8, 0, 0, 255];
        }
        let error = convert(&image, 16, 8).unwrap_err();
        assert!(error.starts_with("16 colours besides transparent, but a 4bpp sprite has at most 15: #000000 #080000"));
        image.pixels[15] = CLEAR;
        assert!(convert(&image, 16, 8).is_ok());
    }

    #[test]
    fn half_transparent_pixels_and_partial_frames_fail() {
        let mut image = filled(8, 8, CLEAR);
        image.pixels[9] = [1, 2, 3, 128];
        assert_eq!(
            convert(&image, 8, 8).unwrap_err(),
            "pixel (1, 1) is partly transparent (alpha 128); use alpha 0 or 255"
        );
        assert_eq!(
            convert(&filled(24, 8, CLEAR), 16, 8).unwrap_err(),
            "the image is 24x8, not a whole number of 16x8 frames"
        );
    }
}
