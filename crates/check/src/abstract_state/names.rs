//! Names interned as small integers for the walk: scopes, resources and workers are
//! compared as ids, once per event that names one.

/// No name (an unused slot of the walk's ids).
pub(super) const NONE: u32 = u32::MAX;

/// Names interned as small integers, first seen first: an open-addressed table keyed by a
/// hash of the names (looked up, never iterated, so its order reaches no result).
pub(super) struct Names<'h> {
    pub(super) names: Vec<&'h str>,
    /// Per id, its name's [`Short`] form.
    shorts: Vec<Option<Short>>,
    /// Ids, [`NONE`] where empty; a power of two long, at most half full.
    slots: Vec<u32>,
}

/// A name of at most 16 bytes as its length and two 8-byte words (its first and its last 8
/// bytes, overlapping, zero-padded): equal exactly when the names are, compared without a
/// call to `memcmp` (names are compared once per event that has one).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Short(u64, u64, usize);

impl Short {
    fn of(name: &str) -> Option<Short> {
        let bytes = name.as_bytes();
        let word = |at: usize| {
            let part: [u8; 8] = bytes[at..at + 8].try_into().expect("8 bytes");
            u64::from_le_bytes(part)
        };
        match bytes.len() {
            0..=7 => {
                let word = bytes.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
                Some(Short(word, 0, bytes.len()))
            }
            8..=16 => Some(Short(word(0), word(bytes.len() - 8), bytes.len())),
            _ => None,
        }
    }

    fn hash(self) -> u64 {
        (self.0 ^ self.1.rotate_left(29) ^ self.2 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

impl Default for Names<'_> {
    fn default() -> Self {
        Names {
            names: Vec::new(),
            shorts: Vec::new(),
            slots: vec![NONE; 32],
        }
    }
}

impl<'h> Names<'h> {
    pub(super) fn id(&mut self, name: &'h str) -> u32 {
        let short = Short::of(name);
        let hash = short.map_or_else(|| long_hash(name), Short::hash);
        let mask = self.slots.len() - 1;
        let mut at = (hash >> 32) as usize & mask;
        loop {
            match self.slots[at] {
                NONE => break,
                id if short.map_or_else(
                    || self.names[id as usize] == name,
                    |short| self.shorts[id as usize] == Some(short),
                ) =>
                {
                    return id
                }
                _ => at = (at + 1) & mask,
            }
        }
        let id = self.names.len() as u32;
        self.names.push(name);
        self.shorts.push(short);
        self.slots[at] = id;
        if self.names.len() * 2 > self.slots.len() {
            let mask = self.slots.len() * 2 - 1;
            self.slots = vec![NONE; mask + 1];
            for (id, (name, short)) in self.names.iter().zip(&self.shorts).enumerate() {
                let hash = short.map_or_else(|| long_hash(name), Short::hash);
                let mut at = (hash >> 32) as usize & mask;
                while self.slots[at] != NONE {
                    at = (at + 1) & mask;
                }
                self.slots[at] = id as u32;
            }
        }
        id
    }
}

/// FNV-1a 64 of a name longer than 16 bytes.
fn long_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
