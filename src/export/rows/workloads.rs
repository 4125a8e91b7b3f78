//! The row of the workload list: one built-in workload's size and checkpoint types.

use super::{visit_types, Row, Value};
use crate::study::models::WorkloadSummary;

/// One workload of `stepcost workloads`.
pub(crate) struct WorkloadRow<'a>(pub &'a WorkloadSummary);

impl Row for WorkloadRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let w = self.0;
        f("workload", Value::Text(&w.id));
        f("name", Value::Text(&w.name));
        f("kind", Value::Text(w.kind.name()));
        f("total_params", Value::Num(w.total_params));
        f("active_params", Value::Num(w.active_params));
        f("layers", w.layers.into());
        f("hidden", w.hidden.into());
        visit_types(&w.types, f);
    }
}
