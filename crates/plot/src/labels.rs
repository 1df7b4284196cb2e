//! Labels placed clear of each other: each goes to the first of a list of spots near its
//! anchor that stays inside its band and the plot and covers no label placed before it nor
//! any anchor's mark.

/// A label to place: its size, the point it names and the band (top, bottom) it should stay
/// in (its lane), all in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label {
    /// The point the label names (a circled mark).
    pub anchor: (i32, i32),
    /// Text width.
    pub width: i32,
    /// Text height.
    pub height: i32,
    /// The band's top and bottom.
    pub band: (i32, i32),
}

/// Left, top, right, bottom.
type Rect = (i32, i32, i32, i32);

/// Radius kept clear around every anchor (its circle).
const ANCHOR_PX: i32 = 11;
/// Distance from the anchor to the label's nearer edge.
const OFFSET_PX: i32 = 14;

impl Label {
    /// The box the label covers with its left end and vertical centre at `(x, y)` (3 px of
    /// backing each side, 2 above and below).
    pub fn rect(&self, (x, y): (i32, i32)) -> Rect {
        (
            x - 3,
            y - self.height / 2 - 2,
            x + self.width + 3,
            y + self.height / 2 + 2,
        )
    }

    /// The spots tried, nearest first: below or above the anchor, right or left of it, one
    /// to four label heights away.
    fn near(&self) -> Vec<(i32, i32)> {
        let (ax, ay) = self.anchor;
        let step = self.height + 6;
        let mut spots = Vec::new();
        for k in 0..4 {
            let dy = OFFSET_PX + self.height / 2 + k * step;
            for dy in [dy, -dy] {
                for x in [ax + OFFSET_PX, ax - OFFSET_PX - self.width] {
                    spots.push((x, ay + dy));
                }
            }
        }
        spots
    }

    /// Further down, for a label that fits nowhere in its band.
    fn further(&self) -> impl Iterator<Item = (i32, i32)> + '_ {
        let (ax, ay) = self.anchor;
        (0..12).flat_map(move |k| {
            let dy = OFFSET_PX + self.height / 2 + k * (self.height + 6);
            [
                (ax + OFFSET_PX, ay + dy),
                (ax - OFFSET_PX - self.width, ay + dy),
            ]
        })
    }
}

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where each label goes (its left end and vertical centre), in order: the first spot next to
/// its anchor that stays inside its band and between `left` and `right` and overlaps no label
/// placed before it nor any anchor's circle. A label that fits nowhere in its band goes to the
/// nearest spot, in or out of it, that overlaps no other label.
pub fn place(labels: &[Label], (left, right): (i32, i32)) -> Vec<(i32, i32)> {
    // Every anchor's circle is kept clear, not only the label's own.
    let circles: Vec<Rect> = labels
        .iter()
        .map(|l| {
            let (x, y) = l.anchor;
            (x - ANCHOR_PX, y - ANCHOR_PX, x + ANCHOR_PX, y + ANCHOR_PX)
        })
        .collect();
    let mut placed: Vec<Rect> = Vec::new();
    let mut out = Vec::with_capacity(labels.len());
    for label in labels {
        let in_plot = |r: Rect| r.0 >= left && r.2 <= right;
        let clear = |r: Rect, of: &[Rect]| !of.iter().any(|p| overlaps(*p, r));
        let in_band = |r: Rect| r.1 >= label.band.0 && r.3 <= label.band.1;
        let near = label.near();
        let chosen = near
            .iter()
            .map(|&spot| (spot, label.rect(spot)))
            .find(|&(_, r)| in_plot(r) && in_band(r) && clear(r, &placed) && clear(r, &circles))
            .map(|(spot, _)| spot)
            .or_else(|| {
                label
                    .further()
                    .find(|&spot| in_plot(label.rect(spot)) && clear(label.rect(spot), &placed))
            })
            .unwrap_or(near[0]);
        placed.push(label.rect(chosen));
        out.push(chosen);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_overlap_neither_each_other_nor_leave_their_band() {
        // Three anchors a few pixels apart in one lane (a VM suspend's three stale writes),
        // and two labels for one anchor.
        let band = (200, 278);
        let label = |x: i32| Label {
            anchor: (x, 260),
            width: 230,
            height: 15,
            band,
        };
        let labels = [label(700), label(700), label(706), label(713)];
        let placed = place(&labels, (150, 1576));
        let rects: Vec<Rect> = labels
            .iter()
            .zip(&placed)
            .map(|(l, at)| l.rect(*at))
            .collect();
        for (i, a) in rects.iter().enumerate() {
            assert!(
                a.1 >= band.0 && a.3 <= band.1,
                "label {i} leaves its band: {a:?}"
            );
            for b in &rects[i + 1..] {
                assert!(!overlaps(*a, *b), "{a:?} overlaps {b:?}");
            }
            for (j, l) in labels.iter().enumerate() {
                let (x, y) = l.anchor;
                let circle = (x - ANCHOR_PX, y - ANCHOR_PX, x + ANCHOR_PX, y + ANCHOR_PX);
                assert!(!overlaps(*a, circle), "label {i} covers anchor {j}");
            }
        }
    }

    #[test]
    fn a_label_with_no_room_in_its_band_still_clears_the_others() {
        // A band too thin for any label: the second goes outside it, under the first.
        let label = Label {
            anchor: (400, 100),
            width: 100,
            height: 15,
            band: (95, 105),
        };
        let placed = place(&[label, label], (0, 1000));
        assert!(
            !overlaps(label.rect(placed[0]), label.rect(placed[1])),
            "{placed:?}"
        );
        // Nothing fits the plot: the nearest spot, not a panic.
        assert_eq!(place(&[label], (0, 10)), vec![label.near()[0]]);
    }
}
