//! The chart: median cycles per operation, bars grouped by benchmark, one colour per allocator.

use crate::Bar;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::path::Path;

/// Debian's `fonts-dejavu-core` (installed by tools/setup); plotters draws no text without a font.
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

pub fn draw(path: &Path, bars: &[Bar]) -> Result<(), String> {
    let font = std::fs::read(FONT).map_err(|e| format!("{FONT}: {e} (install fonts-dejavu-core)"))?;
    register_font("sans-serif", FontStyle::Normal, Box::leak(font.into_boxed_slice()))
        .map_err(|_| "the font did not load".to_string())?;
    let categories = unique(bars.iter().map(|b| b.category.as_str()));
    let series = unique(bars.iter().map(|b| b.series.as_str()));
    if categories.is_empty() {
        return Err("the ROM printed no @@bar lines".into());
    }
    let top = bars.iter().map(|b| b.cycles).fold(1.0, f64::max) * 1.15;
    let root = BitMapBackend::new(path, (1200, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Median cycles per operation on the ARM7TDMI (lower is better)", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..categories.len() as f64, 0.0..top)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(categories.len())
        .x_label_formatter(&|x| categories.get(x.floor() as usize).map(|c| c.to_string()).unwrap_or_default())
        .y_desc("cycles")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / series.len() as f64;
    for (s, name) in series.iter().enumerate() {
        let colour = Palette99::pick(s).to_rgba();
        let rects = bars.iter().filter(|b| b.series == *name).map(|b| {
            let c = categories.iter().position(|c| *c == b.category).unwrap() as f64;
            let x = c + 0.1 + width * s as f64;
            Rectangle::new([(x, 0.0), (x + width * 0.9, b.cycles)], colour.filled())
        });
        chart
            .draw_series(rects)
            .map_err(|e| e.to_string())?
            .label(name.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
