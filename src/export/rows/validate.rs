//! The rows of a validation: each case against its prediction, and the error statistics of
//! each group of cases.

use super::{Row, Value};
use crate::study::validate::{ErrorStats, Outcome};

/// One validation case: measured, predicted, signed error, or why it was skipped.
pub(crate) struct CaseRow<'a>(pub &'a Outcome);

impl Row for CaseRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let o = self.0;
        let c = &o.case;
        f("id", Value::Text(&c.id));
        f("chip", Value::Text(&c.chip));
        f("workload", Value::Text(&c.workload));
        f("kind", Value::Text(&c.kind));
        f("dtype", Value::Text(o.dtype.name()));
        f("metric", Value::Text(c.metric.name()));
        f("measured", Value::Num(c.measured));
        f("predicted", o.predicted.as_ref().ok().copied().into());
        f("error", o.error().into());
        f(
            "skipped",
            Value::Text(o.predicted.as_ref().err().map_or("", String::as_str)),
        );
        f("source", Value::Text(&c.source));
    }
}

/// Error statistics of a group of validation cases.
pub(crate) struct StatsRow<'a>(pub &'a ErrorStats);

impl Row for StatsRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        f("group", Value::Text(&self.0.group));
        f("cases", Value::Int(self.0.cases as u64));
        f("median_abs_error", Value::Num(self.0.median_abs));
        f("p90_abs_error", Value::Num(self.0.p90_abs));
    }
}
