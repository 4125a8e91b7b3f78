//! Limits on input that keep time, memory and the stack bounded whatever a file holds. No
//! real chip or workload file comes near them; each can be moved with an environment
//! variable, read once per process, up to a ceiling that keeps the limit itself safe (memory,
//! and the stack a debug build needs for the deepest expression: nesting costs about 3 KB a
//! level, and each operator of a chain like `a+b+c+...` a level of the compiled tree).
//!
//! | variable | default | ceiling | what it bounds |
//! | --- | --- | --- | --- |
//! | `STEPCOST_MAX_FILE_BYTES` | 16777216 (16 MiB) | 1073741824 (1 GiB) | size of a chip, workload, template, case or config file |
//! | `STEPCOST_MAX_CSV_BYTES` | 1073741824 (1 GiB) | 1099511627776 (1 TiB) | size of a sweep CSV that `plot sweep` reads (streamed: only the plotted columns are held) |
//! | `STEPCOST_MAX_YAML_DEPTH` | 64 | 10000 | nesting of YAML collections |
//! | `STEPCOST_MAX_YAML_NODES` | 250000 | 10000000 | YAML nodes (collections and scalars), aliases expanded |
//! | `STEPCOST_MAX_EXPR_LENGTH` | 4096 | 16384 | characters of one expression |
//! | `STEPCOST_MAX_EXPR_DEPTH` | 64 | 500 | nesting of parentheses and calls in one expression |
//!
//! Every input is read only from a regular file (checked on the opened handle, so a FIFO, a
//! socket, a directory or a device, a symlink to one included, is refused before a byte is
//! read), and never more than its limit is read, whatever size the file claims.
//!
//! The sweep's grid limit is the `--max-scenarios` option; a block's repeat count is at most
//! 10^9 and an expression's evaluation stack at most 24 values (fixed: the evaluator keeps it
//! in an array).

use std::sync::OnceLock;

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes read of a chip, workload, template, case or config file
    /// (`STEPCOST_MAX_FILE_BYTES`).
    pub file_bytes: u64,
    /// Most bytes read of a sweep CSV that `plot sweep` reads (`STEPCOST_MAX_CSV_BYTES`).
    pub csv_bytes: u64,
    /// Deepest nesting of YAML collections (`STEPCOST_MAX_YAML_DEPTH`).
    pub yaml_depth: usize,
    /// Most YAML nodes, collections and scalars, aliases expanded (`STEPCOST_MAX_YAML_NODES`).
    pub yaml_nodes: usize,
    /// Most characters of one expression (`STEPCOST_MAX_EXPR_LENGTH`).
    pub expr_length: usize,
    /// Deepest nesting of parentheses and calls in one expression (`STEPCOST_MAX_EXPR_DEPTH`).
    pub expr_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: 16 * 1024 * 1024,
            csv_bytes: 1024 * 1024 * 1024,
            yaml_depth: 64,
            yaml_nodes: 250_000,
            expr_length: 4096,
            expr_depth: 64,
        }
    }
}

impl Limits {
    /// The most each variable may raise its limit to: a larger file or YAML tree would take
    /// memory out of proportion to any chip or workload, and a deeper or longer expression
    /// the stack (the main thread has 8 MiB; a debug build overflows it past about 2,000
    /// levels of parentheses, or a chain of about 30,000 operators).
    pub const CEILINGS: Limits = Limits {
        file_bytes: 1 << 30,
        csv_bytes: 1 << 40,
        yaml_depth: 10_000,
        yaml_nodes: 10_000_000,
        expr_length: 1 << 14,
        expr_depth: 500,
    };

    /// The defaults, each replaced by its environment variable where that is set; a variable
    /// that is not a whole number from 1 to its ceiling is an error that names it.
    pub fn from_env() -> Result<Limits, String> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Limits, String> {
        let read = |name: &str, default: u64, ceiling: u64| -> Result<u64, String> {
            match lookup(name) {
                None => Ok(default),
                Some(text) => text
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|v| (1..=ceiling).contains(v))
                    .ok_or_else(|| {
                        format!("{name}={text}: expected a whole number from 1 to {ceiling}")
                    }),
            }
        };
        let d = Limits::default();
        let c = Limits::CEILINGS;
        // Every ceiling fits in 32 bits, so in usize.
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Ok(Limits {
            file_bytes: read("STEPCOST_MAX_FILE_BYTES", d.file_bytes, c.file_bytes)?,
            csv_bytes: read("STEPCOST_MAX_CSV_BYTES", d.csv_bytes, c.csv_bytes)?,
            yaml_depth: size(read(
                "STEPCOST_MAX_YAML_DEPTH",
                d.yaml_depth as u64,
                c.yaml_depth as u64,
            )?),
            yaml_nodes: size(read(
                "STEPCOST_MAX_YAML_NODES",
                d.yaml_nodes as u64,
                c.yaml_nodes as u64,
            )?),
            expr_length: size(read(
                "STEPCOST_MAX_EXPR_LENGTH",
                d.expr_length as u64,
                c.expr_length as u64,
            )?),
            expr_depth: size(read(
                "STEPCOST_MAX_EXPR_DEPTH",
                d.expr_depth as u64,
                c.expr_depth as u64,
            )?),
        })
    }
}

/// The limits of this process, read from the environment on first use.
pub fn limits() -> Result<&'static Limits, String> {
    static LIMITS: OnceLock<Result<Limits, String>> = OnceLock::new();
    LIMITS
        .get_or_init(Limits::from_env)
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_replace_defaults_and_bad_values_are_named() {
        let env = |pairs: &'static [(&str, &str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(Limits::from_lookup(env(&[])), Ok(Limits::default()));
        let raised =
            Limits::from_lookup(env(&[("STEPCOST_MAX_FILE_BYTES", "1000000000")])).unwrap();
        assert_eq!(raised.file_bytes, 1_000_000_000);
        assert_eq!(raised.yaml_depth, 64);
        assert_eq!(raised.csv_bytes, 1 << 30);
        let csv = Limits::from_lookup(env(&[("STEPCOST_MAX_CSV_BYTES", "4096")])).unwrap();
        assert_eq!((csv.csv_bytes, csv.file_bytes), (4096, 16 << 20));
        let bad = Limits::from_lookup(env(&[("STEPCOST_MAX_EXPR_DEPTH", "-3")])).unwrap_err();
        assert!(bad.contains("STEPCOST_MAX_EXPR_DEPTH=-3"), "{bad}");
        assert!(Limits::from_lookup(env(&[("STEPCOST_MAX_YAML_NODES", "0")])).is_err());
    }

    #[test]
    fn absurd_values_are_refused_up_to_each_ceiling() {
        let one = |name: &'static str, value: String| {
            Limits::from_lookup(move |n: &str| (n == name).then(|| value.clone()))
        };
        let c = Limits::CEILINGS;
        for (name, ceiling) in [
            ("STEPCOST_MAX_FILE_BYTES", c.file_bytes),
            ("STEPCOST_MAX_YAML_DEPTH", c.yaml_depth as u64),
            ("STEPCOST_MAX_YAML_NODES", c.yaml_nodes as u64),
            ("STEPCOST_MAX_EXPR_LENGTH", c.expr_length as u64),
            ("STEPCOST_MAX_EXPR_DEPTH", c.expr_depth as u64),
        ] {
            assert!(one(name, ceiling.to_string()).is_ok(), "{name}");
            let above = (ceiling + 1).to_string();
            for bad in ["0", "-1", "1e99", "abc", "", "18446744073709551616", &above] {
                let refused = one(name, bad.to_owned()).unwrap_err();
                assert!(refused.starts_with(&format!("{name}={bad}: ")), "{refused}");
                assert!(
                    refused.contains(&format!("from 1 to {ceiling}")),
                    "{refused}"
                );
            }
        }
    }
}
