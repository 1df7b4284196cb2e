use super::*;
use crate::testing::{textbook_nodes, textbook_run};

const PICTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/pictures");

#[test]
fn textbook_svg_is_valid_xml_and_names_the_violation() {
    let (history, checked) = textbook_run();
    let svg = picture_svg(
        &history,
        &checked.violations,
        &textbook_nodes(),
        None,
        &PictureOptions {
            title: Some("textbook (hand-built)".into()),
            ..Default::default()
        },
    )
    .unwrap();
    std::fs::create_dir_all(PICTURES).unwrap();
    std::fs::write(format!("{PICTURES}/textbook-unit.svg"), &svg).unwrap();
    let document = roxmltree::Document::parse(&svg).expect("valid XML");
    let texts: Vec<&str> = document
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for expected in ["worker-0", "coordinator", "storage", "GC pause"] {
        assert!(
            texts.iter().any(|t| t.contains(expected)),
            "{expected}: {texts:?}"
        );
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("I4 violated (no superseded accept)")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("I3 violated:")),
        "{texts:?}"
    );
}

#[test]
fn textbook_png_decodes_and_is_deterministic() {
    let (history, checked) = textbook_run();
    let draw = || {
        picture_png(
            &history,
            &checked.violations,
            &textbook_nodes(),
            None,
            &PictureOptions::default(),
        )
        .unwrap()
    };
    let png_bytes = draw();
    assert_eq!(png_bytes, draw(), "same input, same bytes");
    std::fs::create_dir_all(PICTURES).unwrap();
    std::fs::write(format!("{PICTURES}/textbook-unit.png"), &png_bytes).unwrap();
    let decoder = png::Decoder::new(png_bytes.as_slice());
    let reader = decoder.read_info().expect("a PNG");
    assert_eq!(reader.info().width, WIDTH_PX);
}

#[test]
fn default_window_centres_on_the_first_violation() {
    let (history, checked) = textbook_run();
    let (start, end) = picture_window_ns(&history, &checked.violations, &PictureOptions::default());
    // Evidence spans grant 1 (0.184 ms) to the stale accept (16000.3 ms).
    assert_eq!(start, 0);
    assert!(
        end > 16_000 * NS_PER_MS && end < 20_000 * NS_PER_MS,
        "{end}"
    );
    let asked = PictureOptions {
        window_ns: Some((5, 10)),
        ..Default::default()
    };
    assert_eq!(
        picture_window_ns(&history, &checked.violations, &asked),
        (5, 10)
    );
    assert_eq!(
        picture_window_ns(&history, &[], &PictureOptions::default()).0,
        0
    );
}

#[test]
fn tick_steps_are_round() {
    assert_eq!(tick_step_ns(60_000 * NS_PER_MS), 10_000 * NS_PER_MS);
    assert_eq!(tick_step_ns(19_000 * NS_PER_MS), 2_000 * NS_PER_MS);
    assert_eq!(tick_step_ns(3 * NS_PER_MS), 500_000);
}

#[test]
fn empty_history_filters_and_windows_still_draw() {
    let (history, checked) = textbook_run();
    let cases = [
        (History::default(), PictureOptions::default()),
        (
            history.clone(),
            PictureOptions {
                nodes: Some(vec!["worker-0".into()]),
                ..Default::default()
            },
        ),
        // A window after the run's end, and one of a single nanosecond.
        (
            history.clone(),
            PictureOptions {
                window_ns: Some((u64::MAX / 2, u64::MAX / 2 + 10)),
                ..Default::default()
            },
        ),
        (
            history,
            PictureOptions {
                window_ns: Some((7, 7)),
                ..Default::default()
            },
        ),
    ];
    for (history, options) in cases {
        let svg = picture_svg(
            &history,
            &checked.violations,
            &textbook_nodes(),
            None,
            &options,
        )
        .unwrap();
        roxmltree::Document::parse(&svg).expect("valid XML");
        let png_bytes = picture_png(
            &history,
            &checked.violations,
            &textbook_nodes(),
            None,
            &options,
        )
        .unwrap();
        png::Decoder::new(png_bytes.as_slice())
            .read_info()
            .expect("a PNG");
    }
}
