//! The chart: median cycles per operation in the ARM/IWRAM build, bars grouped by benchmark, one colour per
//! allocator, the legend beside the plot.

use crate::Bar;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font as register_font_as};
use std::path::Path;
use std::sync::OnceLock;

/// Debian's `fonts-dejavu-core` (installed by tools/setup); plotters draws no text without a font.
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const SIZE: (u32, u32) = (2000, 640);
const LEGEND_WIDTH: u32 = 300;

/// Makes `sans-serif` DejaVu Sans for every drawing of this process.
pub fn register_font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let font = std::fs::read(FONT).map_err(|e| format!("{FONT}: {e} (install fonts-dejavu-core)"))?;
        register_font_as("sans-serif", FontStyle::Normal, Box::leak(font.into_boxed_slice()))
            .map_err(|_| "the font did not load".to_string())
    })
    .clone()
}

pub fn draw(path: &Path, bars: &[Bar]) -> Result<(), String> {
    register_font()?;
    let categories = unique(bars.iter().map(|b| b.category.as_str()));
    let series = unique(bars.iter().map(|b| b.series.as_str()));
    if categories.is_empty() {
        return Err("the ROM printed no @@bar lines".into());
    }
    let colour = |name: &str| Palette99::pick(series.iter().position(|s| *s == name).unwrap_or(0)).to_rgba();
    let top = bars.iter().map(|b| b.cycles).fold(1.0, f64::max) * 1.1;
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();

    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let mut chart = ChartBuilder::on(&plot)
        .caption("Median cycles per operation, every allocator ARM code in IWRAM (lower is better)", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..categories.len() as f64, 0.0..top)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("cycles")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| e.to_string())?;
    for (c, category) in categories.iter().enumerate() {
        // Only the series measured in this category share its width.
        let here: Vec<&Bar> = bars.iter().filter(|b| b.category == *category).collect();
        let width = 0.8 / here.len() as f64;
        for (i, bar) in here.iter().enumerate() {
            let x = c as f64 + 0.1 + width * i as f64;
            chart
                .draw_series([Rectangle::new([(x, 0.0), (x + width * 0.9, bar.cycles)], colour(&bar.series).filled())])
                .map_err(|e| e.to_string())?;
        }
        let (px, py) = chart.backend_coord(&(c as f64 + 0.5, 0.0));
        let style = TextStyle::from(("sans-serif", 14)).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
        plot.draw(&Text::new(category.to_string(), (px, py + 8), style)).map_err(e)?;
    }
    for (i, name) in series.iter().enumerate() {
        let y = 70 + 26 * i as i32;
        legend.draw(&Rectangle::new([(10, y), (26, y + 16)], colour(name).filled())).map_err(e)?;
        legend.draw(&Text::new(name.replace('`', ""), (34, y), ("sans-serif", 15))).map_err(e)?;
    }
    root.present().map_err(e)
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
