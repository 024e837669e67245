//! Grayscale rasters: scaling, cropping and turning the pixels the engine reads.

use quarry_core::ocr::GrayImage;

/// An owned grayscale raster, as the engine works on it.
#[derive(Clone)]
pub(crate) struct Raster {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl Raster {
    /// The raster of a checked image.
    pub fn of(image: &GrayImage) -> Raster {
        Raster {
            width: image.width as usize,
            height: image.height as usize,
            pixels: image.pixels.clone(),
        }
    }

    /// Bilinear sample at (x, y), clamped to the raster.
    fn sample(&self, x: f32, y: f32) -> f32 {
        bilinear(self.width, self.height, x, y, |i| f32::from(self.pixels[i]))
    }

    /// The region `[left, left + width) x [top, top + height)` scaled to `out_w x out_h`, each
    /// output pixel the mean of the source pixels it covers when shrinking (so thin strokes
    /// survive), bilinear when growing; values as `f32` 0..255, row by row.
    pub fn scaled_region(
        &self,
        (left, top, width, height): (usize, usize, usize, usize),
        out_w: usize,
        out_h: usize,
    ) -> Vec<f32> {
        let (sx, sy) = (width as f32 / out_w as f32, height as f32 / out_h as f32);
        let mut out = Vec::with_capacity(out_w * out_h);
        for oy in 0..out_h {
            for ox in 0..out_w {
                if sx <= 1.0 && sy <= 1.0 {
                    let x = left as f32 + (ox as f32 + 0.5) * sx - 0.5;
                    let y = top as f32 + (oy as f32 + 0.5) * sy - 0.5;
                    out.push(self.sample(x, y));
                    continue;
                }
                let x0 = left + (ox as f32 * sx) as usize;
                let y0 = top + (oy as f32 * sy) as usize;
                let x1 =
                    (left + ((ox + 1) as f32 * sx).ceil() as usize).clamp(x0 + 1, left + width);
                let y1 = (top + ((oy + 1) as f32 * sy).ceil() as usize).clamp(y0 + 1, top + height);
                let mut sum = 0.0;
                for y in y0..y1 {
                    let row = &self.pixels[y * self.width + x0..y * self.width + x1];
                    sum += row.iter().map(|&p| f32::from(p)).sum::<f32>();
                }
                out.push(sum / ((x1 - x0) * (y1 - y0)) as f32);
            }
        }
        out
    }

    /// The raster turned by `degrees` (any angle; positive: clockwise) about its centre, at the
    /// same size, what comes in from outside white.
    pub fn rotated(&self, degrees: f32) -> Raster {
        let pixels = rotated_grid(self.width, self.height, (1.0, 1.0), degrees, |x, y| {
            if inside(self.width, self.height, x, y) {
                self.sample(x, y).round() as u8
            } else {
                255
            }
        });
        Raster {
            width: self.width,
            height: self.height,
            pixels,
        }
    }

    /// The raster turned clockwise by `degrees` (90, 180 or 270; anything else: unchanged).
    pub fn turned(&self, degrees: u32) -> Raster {
        let (w, h) = (self.width, self.height);
        let mut pixels = vec![0u8; w * h];
        let (width, height) = match degrees {
            90 | 270 => (h, w),
            180 => (w, h),
            _ => return self.clone(),
        };
        for y in 0..h {
            for x in 0..w {
                let (nx, ny) = match degrees {
                    90 => (h - 1 - y, x),
                    180 => (w - 1 - x, h - 1 - y),
                    _ => (y, w - 1 - x),
                };
                pixels[ny * width + nx] = self.pixels[y * w + x];
            }
        }
        Raster {
            width,
            height,
            pixels,
        }
    }
}

/// The bilinear sample at (x, y) of a `width x height` grid whose value at index `i` (row by
/// row) is `at(i)`, the position clamped to the grid.
pub(crate) fn bilinear(
    width: usize,
    height: usize,
    x: f32,
    y: f32,
    at: impl Fn(usize) -> f32,
) -> f32 {
    let x = x.clamp(0.0, (width - 1) as f32);
    let y = y.clamp(0.0, (height - 1) as f32);
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(width - 1), (y0 + 1).min(height - 1));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    let top = at(y0 * width + x0) * (1.0 - fx) + at(y0 * width + x1) * fx;
    let bottom = at(y1 * width + x0) * (1.0 - fx) + at(y1 * width + x1) * fx;
    top * (1.0 - fy) + bottom * fy
}

/// Whether (x, y) lies within a `width x height` grid.
pub(crate) fn inside(width: usize, height: usize, x: f32, y: f32) -> bool {
    x >= 0.0 && y >= 0.0 && x <= (width - 1) as f32 && y <= (height - 1) as f32
}

/// A `width x height` grid turned by `degrees` (positive: clockwise) about its centre, at the
/// same size: each cell is `source(x, y)` of the position, in the grid's cells, it comes from.
/// A cell stands for `scale` pixels of the page (wide, high), and the page is what turns, so a
/// map of a page at another scale turns exactly as the page does.
pub(crate) fn rotated_grid<T>(
    width: usize,
    height: usize,
    (sx, sy): (f32, f32),
    degrees: f32,
    mut source: impl FnMut(f32, f32) -> T,
) -> Vec<T> {
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (cx, cy) = (width as f32 * sx / 2.0, height as f32 * sy / 2.0);
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            // The source of (x, y), in page pixels: turned back by `degrees`.
            let (dx, dy) = (x as f32 * sx - cx, y as f32 * sy - cy);
            let (px, py) = (cos * dx + sin * dy + cx, -sin * dx + cos * dy + cy);
            out.push(source(px / sx, py / sy));
        }
    }
    out
}

/// Pixel values (0..255) as the PP-OCR models take them: scaled to -1..1, the gray value in
/// each of the three channels.
pub(crate) fn normalized_channels(values: &[f32], out: &mut Vec<f32>) {
    let start = out.len();
    out.extend(values.iter().map(|v| v / 127.5 - 1.0));
    let plane = out.len() - start;
    out.extend_from_within(start..start + plane);
    out.extend_from_within(start..start + plane);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(width: usize, height: usize) -> Raster {
        Raster {
            width,
            height,
            pixels: (0..width * height).map(|i| i as u8).collect(),
        }
    }

    #[test]
    fn turning_four_times_a_quarter_gives_the_raster_back() {
        let r = raster(3, 2);
        let turned = r.turned(90);
        assert_eq!((turned.width, turned.height), (2, 3));
        // The bottom-left pixel goes to the top-left when turned clockwise.
        assert_eq!(turned.pixels[0], r.pixels[3]);
        let back = turned.turned(90).turned(90).turned(90);
        assert_eq!(back.pixels, r.pixels);
        assert_eq!(r.turned(180).turned(180).pixels, r.pixels);
        assert_eq!(r.turned(270).turned(90).pixels, r.pixels);
    }

    #[test]
    fn shrinking_averages_and_keeps_a_uniform_region_uniform() {
        let r = Raster {
            width: 4,
            height: 4,
            pixels: vec![200; 16],
        };
        assert_eq!(r.scaled_region((0, 0, 4, 4), 2, 2), vec![200.0; 4]);
        let stripes = Raster {
            width: 2,
            height: 1,
            pixels: vec![0, 100],
        };
        assert_eq!(stripes.scaled_region((0, 0, 2, 1), 1, 1), vec![50.0]);
    }

    #[test]
    fn channels_are_scaled_to_minus_one_to_one_three_times() {
        let mut out = Vec::new();
        normalized_channels(&[0.0, 255.0], &mut out);
        assert_eq!(out, vec![-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]);
    }
}
