//! The inspector's charts, drawn here as SVG with plotters: a memory's retention over time, the
//! forgetting per day, a hit's score parts. Each returns the SVG markup to put in a page.

use plotters::prelude::*;

/// The chart's size in pixels.
const SIZE: (u32, u32) = (720, 300);

const BLUE: RGBColor = RGBColor(47, 111, 219);
const ORANGE: RGBColor = RGBColor(230, 140, 30);
const RED: RGBColor = RGBColor(179, 38, 30);
const GREEN: RGBColor = RGBColor(46, 140, 80);

/// A drawing failed (plotters' error, as text).
fn failed(e: impl std::fmt::Display) -> String {
    format!("chart: {e}")
}

/// What the retention chart draws: the curve (days since the anchor, retention), the
/// thresholds θ1 and θ2, and now.
pub(crate) struct Retention<'a> {
    /// The curve's points, days since the anchor and the retention then.
    pub curve: &'a [(f64, f64)],
    /// θ1 (demotion).
    pub working_threshold: f64,
    /// θ2 (forgetting).
    pub forget_threshold: f64,
    /// Now: days since the anchor, and the retention now.
    pub now: (f64, f64),
}

/// A memory's retention over time, with θ1 and θ2 as lines and now as a dot.
pub(crate) fn retention(r: &Retention<'_>) -> Result<String, String> {
    let x_max = r
        .curve
        .iter()
        .map(|p| p.0)
        .fold(r.now.0, f64::max)
        .max(1e-6);
    let y_max = r.curve.iter().map(|p| p.1).fold(1.0, f64::max) * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .caption("Retention over time", ("sans-serif", 16))
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(failed)?;
        chart
            .configure_mesh()
            .x_desc("days since its decay clock last restarted")
            .y_desc("retention")
            .draw()
            .map_err(failed)?;
        chart
            .draw_series(LineSeries::new(
                r.curve.iter().copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(failed)?
            .label("retention")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE));
        for (theta, color, name) in [
            (r.working_threshold, ORANGE, "θ1: demoted below"),
            (r.forget_threshold, RED, "θ2: forgotten below"),
        ] {
            chart
                .draw_series(LineSeries::new([(0.0, theta), (x_max, theta)], color))
                .map_err(failed)?
                .label(format!("{name} ({theta})"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        chart
            .draw_series(std::iter::once(Circle::new(r.now, 5, BLUE.filled())))
            .map_err(failed)?
            .label("now")
            .legend(|(x, y)| Circle::new((x + 9, y), 4, BLUE.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// Demotions and deletions per day: `days` holds each day's label and its two counts.
pub(crate) fn forgetting(days: &[(String, usize, usize)]) -> Result<String, String> {
    let n = days.len().max(1) as f64;
    let y_max = days.iter().map(|d| d.1.max(d.2)).max().unwrap_or(0).max(1) as f64 * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .caption("Demoted and deleted per day", ("sans-serif", 16))
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0f64..n, 0f64..y_max)
            .map_err(failed)?;
        let label = |x: &f64| {
            let i = x.floor() as usize;
            days.get(i).map(|d| d.0.clone()).unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(days.len().clamp(1, 10))
            .x_label_formatter(&label)
            .y_desc("memories")
            .draw()
            .map_err(failed)?;
        let bars = |offset: f64, color: RGBColor, pick: fn(&(String, usize, usize)) -> usize| {
            days.iter().enumerate().map(move |(i, d)| {
                let x = i as f64 + offset;
                Rectangle::new([(x, 0.0), (x + 0.38, pick(d) as f64)], color.filled())
            })
        };
        chart
            .draw_series(bars(0.1, ORANGE, |d| d.1))
            .map_err(failed)?
            .label("demoted to long-term")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], ORANGE.filled()));
        chart
            .draw_series(bars(0.52, RED, |d| d.2))
            .map_err(failed)?
            .label("deleted (decayed or evicted)")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], RED.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// A hit's score parts as horizontal bars: each part's name and value.
pub(crate) fn score_parts(parts: &[(String, f64)]) -> Result<String, String> {
    let n = parts.len().max(1) as f64;
    let x_max = parts.iter().map(|p| p.1.abs()).fold(1.0, f64::max) * 1.1;
    let height = 40 + 26 * parts.len().max(1) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (480, height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        // Part i is centred on y = i, where its label is.
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(24)
            .y_label_area_size(130)
            .build_cartesian_2d(0f64..x_max, -0.5f64..n - 0.5)
            .map_err(failed)?;
        let label = |y: &f64| {
            let i = y.round();
            match parts.get(i.max(0.0) as usize) {
                Some(p) if (y - i).abs() < 1e-6 => format!("{} {:.3}", p.0, p.1),
                _ => String::new(),
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(parts.len().max(1))
            .y_label_formatter(&label)
            .draw()
            .map_err(failed)?;
        chart
            .draw_series(parts.iter().enumerate().map(|(i, p)| {
                let y = i as f64;
                Rectangle::new([(0.0, y - 0.3), (p.1.max(0.0), y + 0.3)], GREEN.filled())
            }))
            .map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_documents() {
        let curve = [(0.0, 1.0), (1.0, 0.5), (2.0, 0.25)];
        let svg = retention(&Retention {
            curve: &curve,
            working_threshold: 0.3,
            forget_threshold: 0.02,
            now: (1.0, 0.5),
        })
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("polyline"), "{svg}");
        let svg = forgetting(&[("2026-11-25".into(), 3, 1), ("2026-11-26".into(), 0, 2)]).unwrap();
        assert!(svg.contains("<rect"), "{svg}");
        assert!(svg.contains("2026-11-25"), "{svg}");
        let svg = score_parts(&[("BM25".into(), 2.5), ("cosine".into(), 0.7)]).unwrap();
        assert!(svg.contains("BM25") && svg.contains("cosine"), "{svg}");
    }
}
