//! "Did you mean": the one ranking of known names against a name that matched none of them,
//! for chips, workloads, params, tensors, fusion plans, op kinds and columns alike.
//!
//! A candidate ranks first when the typed name's alphanumeric tokens (runs of letters, runs
//! of digits) appear in it in order, ignoring case: `llama3-70b` has the tokens `llama`, `3`,
//! `70`, `b`, all found in turn in `llama-3.1-70b` but not in `llama-2-70b`. So a name typed
//! without its punctuation or version suffix still finds its model. Among those, and among
//! the rest, the smaller edit distance wins; a candidate that holds the tokens is always
//! offered, another only when its edit distance is within a third of the longer name (a
//! typo, not a different word).

/// The best of `candidates` for `typed`, if one is close enough to offer; the first of
/// equally good ones.
pub(crate) fn closest<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let tokens = tokens(typed);
    let typed_chars = typed.chars().count();
    let mut best: Option<(Rank, &str)> = None;
    for candidate in candidates {
        let in_order = !tokens.is_empty() && tokens_in_order(&tokens, candidate);
        let limit = (typed.len().max(candidate.len()) / 3).max(1);
        // An edit distance is at least the difference in length: a long way off is passed
        // over without computing it.
        if !in_order && candidate.chars().count().abs_diff(typed_chars) > limit {
            continue;
        }
        let distance = edit_distance(typed, candidate);
        if !in_order && distance > limit {
            continue;
        }
        let rank = Rank { in_order, distance };
        if best.as_ref().is_none_or(|(b, _)| rank.better_than(b)) {
            best = Some((rank, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// ` (did you mean `x`?)` when a candidate is close to `typed`, else nothing.
pub(crate) fn did_you_mean<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    closest(typed, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// How well a candidate matches: tokens in order first, then fewer edits.
#[derive(Debug, Clone, Copy)]
struct Rank {
    in_order: bool,
    distance: usize,
}

impl Rank {
    fn better_than(&self, other: &Rank) -> bool {
        (!self.in_order, self.distance) < (!other.in_order, other.distance)
    }
}

/// The runs of letters and the runs of digits of `text`, lower-cased.
fn tokens(text: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    let mut last: Option<bool> = None; // whether the current run is digits
    for c in text.chars() {
        if !c.is_alphanumeric() {
            last = None;
            continue;
        }
        let digit = c.is_numeric();
        match tokens.last_mut() {
            Some(run) if last == Some(digit) => run.extend(c.to_lowercase()),
            _ => tokens.push(c.to_lowercase().collect()),
        }
        last = Some(digit);
    }
    tokens
}

/// Whether each token occurs in `candidate` (lower-cased) after the one before it.
fn tokens_in_order(tokens: &[String], candidate: &str) -> bool {
    let candidate = candidate.to_lowercase();
    let mut rest = candidate.as_str();
    for token in tokens {
        match rest.find(token.as_str()) {
            Some(at) => rest = &rest[at + token.len()..],
            None => return false,
        }
    }
    true
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let old = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(old + 1);
            prev = old;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_runs_of_letters_and_of_digits() {
        assert_eq!(tokens("llama3-70b"), ["llama", "3", "70", "b"]);
        assert_eq!(tokens("H200"), ["h", "200"]);
        assert!(tokens("--").is_empty());
    }

    #[test]
    fn tokens_in_order_rank_before_edit_distance() {
        let models = [
            "llama-2-70b",
            "llama-3.1-405b",
            "llama-3.1-70b",
            "llama-3.1-8b",
        ];
        // `llama-2-70b` is 3 edits away, `llama-3.1-70b` 3 too, but only the second holds
        // `llama`, `3`, `70`, `b` in order.
        assert_eq!(closest("llama3-70b", models), Some("llama-3.1-70b"));
        assert_eq!(closest("LLAMA3.1-8B", models), Some("llama-3.1-8b"));
        assert_eq!(
            closest("mi300", ["mi325x", "mi300x", "h200"]),
            Some("mi300x")
        );
    }

    #[test]
    fn typos_by_edit_distance_and_nothing_far_off() {
        assert_eq!(
            closest("capcity", ["capacity", "bandwidth"]),
            Some("capacity")
        );
        assert_eq!(closest("flsh", ["none", "flash", "full"]), Some("flash"));
        assert_eq!(closest("zzz", ["capacity", "bandwidth"]), None);
        assert_eq!(closest("", ["a"]), Some("a"));
        assert_eq!(closest("x", Vec::<&str>::new()), None);
        assert_eq!(
            did_you_mean("h20O", ["h20", "h200"]),
            " (did you mean `h20`?)"
        );
    }
}
