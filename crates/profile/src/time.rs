//! Wall-clock timestamps as logs and incident records write them: RFC 3339 / ISO 8601 with a
//! zone (`2024-03-01T12:00:00Z`, `…12:00:00.123+01:00`, the JVM's `…12:00:00.123+0100`; a
//! space may stand for the `T`), to milliseconds since the Unix epoch. A time without a zone
//! is refused: it would be read in some zone silently.

/// Milliseconds since the Unix epoch, or `None` when `text` is not such a timestamp.
pub fn rfc3339_ms(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    let separators = bytes[4] == b'-'
        && bytes[7] == b'-'
        && (bytes[10] == b'T' || bytes[10] == b't' || bytes[10] == b' ')
        && bytes[13] == b':'
        && bytes[16] == b':';
    if !separators {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction_ms = 0.0;
    if let Some(after) = rest.strip_prefix('.') {
        let end = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        if end == 0 || end > 9 {
            return None;
        }
        fraction_ms = format!("0.{}", &after[..end]).parse::<f64>().ok()? * 1e3;
        rest = &after[end..];
    }
    let offset_minutes = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let zone = rest[1..].replace(':', "");
            if zone.len() != 4 || !zone.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let (hours, minutes): (i64, i64) = (zone[..2].parse().ok()?, zone[2..].parse().ok()?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * (hours * 60 + minutes)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds as f64 * 1e3 + fraction_ms)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::rfc3339_ms;

    #[test]
    fn timestamps_as_logs_write_them() {
        let cases: &[(&str, Option<f64>)] = &[
            ("1970-01-01T00:00:00Z", Some(0.0)),
            ("1970-01-01T00:00:01.5Z", Some(1_500.0)),
            ("2024-03-01T12:00:00Z", Some(1_709_294_400_000.0)),
            ("2024-03-01 13:00:00+01:00", Some(1_709_294_400_000.0)),
            ("2024-03-01T12:00:00.123+0000", Some(1_709_294_400_123.0)),
            ("2024-02-29T00:00:00Z", Some(1_709_164_800_000.0)),
            ("2023-02-29T00:00:00Z", None),
            ("2024-03-01T12:00:00", None),
            ("2024-03-01T25:00:00Z", None),
            ("2024-03-01T12:00:00+2", None),
            ("0.012s", None),
            ("", None),
        ];
        for &(text, expected) in cases {
            assert_eq!(rfc3339_ms(text), expected, "{text}");
        }
    }
}
