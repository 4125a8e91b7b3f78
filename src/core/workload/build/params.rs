//! What a model sets over its template: the params (each default compiled, with an order in
//! which each follows the params it reads) and the default data types.

use super::{valid_name, Builder, Model};
use crate::base::diagnostic::Origin;
use crate::base::format::Format;
use crate::base::types::{TypeKey, Types};
use crate::core::workload::file::WorkloadFile;
use crate::core::workload::graph::topological_order;
use crate::core::workload::Param;

impl Builder {
    /// The params of `file`, with the values `model` gives where it gives one.
    pub(super) fn params_of(&mut self, file: &WorkloadFile, model: Option<&Model>) -> Vec<Param> {
        if let Some((src, m)) = model {
            for (name, value) in &m.params {
                if !file.params.contains_key(name) {
                    let message = if self.listing() {
                        format!(
                            "`{name}` is not a param of the template{}; its params: {}",
                            self.did_you_mean(name, self.params.iter().map(String::as_str)),
                            self.params.join(", ")
                        )
                    } else {
                        String::new() // counted, not listed
                    };
                    let origin = Origin::of(format!("params.{name}"), value).in_file(src);
                    self.problem(origin, message);
                }
            }
        }
        let mut params = Vec::new();
        for (name, value) in &file.params {
            let (value, origin) = match model.and_then(|(src, m)| Some((src, m.params.get(name)?)))
            {
                Some((src, v)) => (v, Origin::of(format!("params.{name}"), v).in_file(src)),
                None => (value, self.at(format!("params.{name}"), value)),
            };
            if !valid_name(name) || name.contains(['-', '.']) {
                self.problem(
                    origin.clone(),
                    format!("`{name}` is not a valid param name (letters, digits and `_`, starting with a letter or `_`)"),
                );
            }
            match self.compile(&value.value) {
                Ok(default) => params.push(Param {
                    name: name.clone(),
                    default,
                    origin,
                }),
                Err(message) => self.problem(origin, message),
            }
        }
        params
    }

    /// Orders params so each follows those its default reads; reports a cycle.
    pub(super) fn param_order(&mut self, params: &[Param]) -> Vec<usize> {
        let deps: Vec<&[usize]> = params.iter().map(|p| p.default.params()).collect();
        match topological_order(&deps) {
            Ok(order) => order,
            Err(cycle) => {
                let names: Vec<&str> = cycle.iter().map(|&i| params[i].name.as_str()).collect();
                let p = &params[cycle[0]];
                self.problem(
                    p.origin.clone(),
                    format!(
                        "params depend on each other in a cycle: {}",
                        names.join(" -> ")
                    ),
                );
                Vec::new()
            }
        }
    }

    /// The checkpoint's format of each slot: the graph file's, then `model`'s over them, each
    /// file's keys in order (so `weight` then `embed.weight` keeps the embeddings apart).
    pub(super) fn dtypes(&mut self, file: &WorkloadFile, model: Option<&Model>) -> Types {
        let mut default_dtypes = Types::default();
        let model_dtypes = model
            .into_iter()
            .flat_map(|(src, m)| m.dtypes.iter().map(move |d| (Some(src), d)));
        for (src, (role, value)) in file.dtypes.iter().map(|d| (None, d)).chain(model_dtypes) {
            let mut origin = self.at(format!("dtypes.{role}"), value);
            if let Some(src) = src {
                origin = origin.in_file(src);
            }
            match (role.parse::<TypeKey>(), value.value.parse::<Format>()) {
                (Ok(r), Ok(d)) => default_dtypes.set(r, d),
                (Err(e), _) | (_, Err(e)) => self.problem(origin, e),
            }
        }
        default_dtypes
    }
}
