//! The cloud price books the chips' files are priced on: each `price.basis` names one
//! provider, tier and date; a chip its book lists no price for says so (`cloud: none`).
//! `stepcost prices` lists them, so that a reader sees which chips share a basis.

use crate::core::chip::Chip;

/// One cloud price basis and the chips on it.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudBook {
    /// The basis as the chip files name it (`runpod-secure-on-demand-2026-02-26`).
    pub basis: String,
    /// Its date (`2026-02-26`), where the name ends with one.
    pub date: Option<String>,
    /// The chips it prices, with their USD per chip-hour, in the order given.
    pub priced: Vec<(String, f64)>,
    /// The chips named on it that it gives no price for.
    pub unpriced: Vec<String>,
}

/// The books of `chips`, in the order their bases first appear; chips without a basis are
/// left out.
pub fn cloud_books(chips: &[Chip]) -> Vec<CloudBook> {
    let mut books: Vec<CloudBook> = Vec::new();
    for chip in chips {
        let Some(basis) = chip.cloud_basis() else {
            continue;
        };
        let at = match books.iter().position(|b| b.basis == basis) {
            Some(i) => i,
            None => {
                books.push(CloudBook {
                    basis: basis.to_owned(),
                    date: date_of(basis),
                    priced: Vec::new(),
                    unpriced: Vec::new(),
                });
                books.len() - 1
            }
        };
        match chip.price_usd_per_hour() {
            Some(usd) => books[at].priced.push((chip.id().to_owned(), usd)),
            None => books[at].unpriced.push(chip.id().to_owned()),
        }
    }
    books
}

/// The `YYYY-MM-DD` a basis name ends with.
fn date_of(basis: &str) -> Option<String> {
    let tail = basis.get(basis.len().checked_sub(10)?..)?;
    let ok = tail.len() == 10
        && tail.char_indices().all(|(i, c)| match i {
            4 | 7 => c == '-',
            _ => c.is_ascii_digit(),
        });
    ok.then(|| tail.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_basis_dates_itself_at_its_end() {
        assert_eq!(
            date_of("runpod-secure-on-demand-2026-02-26").as_deref(),
            Some("2026-02-26")
        );
        assert_eq!(date_of("own quote"), None);
        assert_eq!(date_of("2026"), None);
    }
}
