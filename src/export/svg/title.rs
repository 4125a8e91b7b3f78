//! A sweep chart's subtitle: the scenario columns that hold one value across the plotted rows.

/// The scenario columns' values on the first plotted row, and which of them kept it since.
#[derive(Default)]
pub(super) struct Scenario {
    first: Vec<String>,
    same: Vec<bool>,
}

impl Scenario {
    pub(super) fn see(&mut self, record: &csv::StringRecord, columns: &[usize]) {
        if self.first.is_empty() {
            self.first = columns
                .iter()
                .map(|&i| record.get(i).unwrap_or("").to_owned())
                .collect();
            self.same = vec![true; columns.len()];
            return;
        }
        for (k, &i) in columns.iter().enumerate() {
            self.same[k] &= record.get(i).unwrap_or("") == self.first[k];
        }
    }

    /// `llama-3.1-70b, h200, expected, fusion=flash, weight_dtype=bf16, context=4096`: the
    /// workload, chip and mode by value, the rest as `column=value`; parallel degrees of 1
    /// and empty cells are left out.
    pub(super) fn title(&self, header: &[String], columns: &[usize]) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (k, &i) in columns.iter().enumerate() {
            let (name, value) = (header[i].as_str(), self.first[k].as_str());
            let trivial = matches!(name, "tp" | "pp" | "ep") && value == "1";
            if !self.same[k] || value.is_empty() || trivial {
                continue;
            }
            parts.push(match name {
                "workload" | "chip" | "mode" => value.to_owned(),
                _ => format!("{name}={value}"),
            });
        }
        parts.join(", ")
    }
}
