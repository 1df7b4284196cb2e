use super::*;
use draw::{repeating_colours_text, violation_label};
use fencesim_testkit::{textbook_nodes, textbook_run};
use plotters::style::RGBColor;

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
    // I3 and I4 are proven by the same stale accept: one label names both.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("I3 + I4 violated (") && t.contains("no superseded accept")),
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

fn textbook_svg(history: &History, violations: &[Violation]) -> String {
    picture_svg(
        history,
        violations,
        &textbook_nodes(),
        None,
        &PictureOptions::default(),
    )
    .unwrap()
}

fn hex(colour: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", colour.0, colour.1, colour.2)
}

#[test]
fn the_evidence_write_is_drawn_on_top_of_its_circle_and_its_neighbours() {
    let (history, checked) = textbook_run();
    let svg = textbook_svg(&history, &checked.violations);
    let document = roxmltree::Document::parse(&svg).unwrap();
    let circles: Vec<(usize, &str, &str)> = document
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .enumerate()
        .map(|(i, n)| (i, n.attribute("r").unwrap(), n.attribute("fill").unwrap()))
        .collect();
    // Write marks are 4 px dots; violation circles 10 px outlines.
    let last_dot = circles.iter().rev().find(|(_, r, _)| *r == "4").unwrap();
    let last_ring = circles.iter().rev().find(|(_, r, _)| *r == "10").unwrap();
    // The stale write (token 1) after worker-1's later token-2 writes and after the rings.
    assert_eq!(last_dot.2, hex(token_colour(1)), "{circles:?}");
    assert!(last_dot.0 > last_ring.0, "{circles:?}");
}

#[test]
fn no_violation_is_not_written_in_red_and_a_violation_is() {
    let (history, checked) = textbook_run();
    let subtitle_fill = |svg: &str, starts: &str| -> String {
        let document = roxmltree::Document::parse(svg).unwrap();
        let node = document
            .descendants()
            .find(|n| {
                n.has_tag_name("text") && n.text().is_some_and(|t| t.trim().starts_with(starts))
            })
            .unwrap_or_else(|| panic!("{starts}"));
        node.attribute("fill").unwrap().to_string()
    };
    let none = textbook_svg(&history, &[]);
    assert_ne!(subtitle_fill(&none, "no violation"), hex(VIOLATION_RED));
    let some = textbook_svg(&history, &checked.violations);
    assert_eq!(subtitle_fill(&some, "I3 violated:"), hex(VIOLATION_RED));
}

#[test]
fn no_token_shares_a_faults_colour() {
    for colour in TOKEN_COLOURS {
        for fault in [
            VM_PURPLE,
            GC_GREY,
            PARTITION_ORANGE,
            CRASH_BLACK,
            VIOLATION_RED,
            CLOCK_TEAL,
        ] {
            // Far apart in RGB (each channel difference summed), not merely unequal.
            let distance = (i32::from(colour.0) - i32::from(fault.0)).abs()
                + (i32::from(colour.1) - i32::from(fault.1)).abs()
                + (i32::from(colour.2) - i32::from(fault.2)).abs();
            assert!(distance > 90, "{colour:?} ~ {fault:?}");
        }
    }
}

#[test]
fn empty_lanes_are_compact_and_repeating_colours_are_said() {
    let (history, checked) = textbook_run();
    let nodes = textbook_nodes();
    let full = Layout::new(
        &history,
        &checked.violations,
        &nodes,
        None,
        &PictureOptions::default(),
    );
    // A window where only worker-1 and the storage and coordinator have anything: worker-0
    // is paused from 1 s to 16 s, so its pause bar is there; pick the run's tail instead.
    let tail = Layout::new(
        &history,
        &checked.violations,
        &nodes,
        None,
        &PictureOptions {
            window_ns: Some((20_000 * NS_PER_MS, 21_000 * NS_PER_MS)),
            ..Default::default()
        },
    );
    let worker_0 = tail
        .lanes
        .iter()
        .position(|(n, _)| n == "worker-0")
        .unwrap();
    assert_eq!(tail.lane_px[worker_0], EMPTY_LANE_PX);
    assert!(tail.height_px < full.height_px);
    assert!(
        full.lane_px.iter().all(|px| *px == LANE_PX),
        "{:?}",
        full.lane_px
    );
    // Two tokens: colours name them. Many epochs: the legend says colours repeat.
    assert!(!full.tokens_repeat);
    let mut many = History::default();
    for token in 1..=(TOKEN_COLOURS.len() as u64 + 2) {
        let t = token * 1_000 * NS_PER_MS;
        many.push(
            t,
            "coordinator",
            fencesim_model::history::EventKind::Granted {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token,
                expires_mono_ms: 0.0,
            },
        );
        many.push(
            t + 500 * NS_PER_MS,
            "coordinator",
            fencesim_model::history::EventKind::Released {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token,
            },
        );
    }
    let layout = Layout::new(&many, &[], &nodes, None, &PictureOptions::default());
    assert!(layout.tokens_repeat);
    let svg = picture_svg(&many, &[], &nodes, None, &PictureOptions::default()).unwrap();
    assert!(svg.contains(&repeating_colours_text()), "legend");
}

#[test]
fn violations_close_together_share_one_label() {
    use fencesim_model::Invariant::{I3, I4};
    assert_eq!(
        violation_label(&[I4], 1),
        "I4 violated (no superseded accept)"
    );
    let both = violation_label(&[I3, I4], 3);
    assert!(both.starts_with("I3 + I4 violated \u{d7}3 ("), "{both}");
}
