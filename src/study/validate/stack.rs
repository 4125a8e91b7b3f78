//! The software stack a row was measured on: the engine (and its version) that ran a model
//! step, a request or a serving run, or the kernel library (its kernel path) that ran a lone
//! kernel, and the harness that timed it. Sources on one chip disagree by library and harness
//! (docs/sources.md, Measurements), so each row names its own; a file whose header has none of
//! these columns (a user's own cases) names no stack.

use crate::core::engine::KernelPath;

use super::fields::FieldError;

/// The columns that name a row's stack.
pub(super) const STACK_COLUMNS: [&str; 4] = ["engine", "version", "library", "harness"];

/// Engine ids a row may name: the built-in engines of `engines/*.yaml` (`vllm@0.7` is vLLM's
/// V0 engine, `trtllm` TensorRT-LLM's PyTorch backend, `trtllm-cpp` its C++ runtime,
/// `compiled` a bare compiled loop such as gpt-fast), and `unknown` where the source does not
/// say.
pub fn engine_ids() -> impl Iterator<Item = &'static str> {
    crate::core::engine::builtin_ids().chain(["unknown"])
}

/// The library a kernel row's kernel ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Library {
    /// A GEMM library: a kernel path whose fractions a chip file may give apart.
    Path(KernelPath),
    /// FlashAttention (2 or 3).
    FlashAttention,
    /// TensorRT-LLM's generated attention kernels (trtllm-gen, as FlashInfer calls them).
    TrtllmGen,
    /// A bandwidth kernel written for its benchmark (BabelStream, gpu-stream, a tensor copy).
    Stream,
    /// Not stated by the source.
    Unknown,
}

impl Library {
    /// The names the `library` column takes besides the kernel paths'.
    const OTHERS: [(&'static str, Library); 4] = [
        ("flash-attention", Library::FlashAttention),
        ("trtllm-gen", Library::TrtllmGen),
        ("stream", Library::Stream),
        ("unknown", Library::Unknown),
    ];

    /// The library a `library` column names.
    pub fn from_name(name: &str) -> Option<Library> {
        KernelPath::from_name(name).map(Library::Path).or_else(|| {
            (Library::OTHERS.iter())
                .find(|(n, _)| *n == name)
                .map(|(_, l)| *l)
        })
    }

    /// Its name, as the column writes it.
    pub fn name(self) -> &'static str {
        match self {
            Library::Path(p) => p.name(),
            other => (Library::OTHERS.iter())
                .find(|(_, l)| *l == other)
                .map_or("", |(n, _)| n),
        }
    }

    /// The kernel path it is, where it is a GEMM library.
    pub fn path(self) -> Option<KernelPath> {
        match self {
            Library::Path(p) => Some(p),
            _ => None,
        }
    }

    /// Every name the column takes, for an error.
    fn expected() -> String {
        let mut names: Vec<&str> = KernelPath::ALL.iter().map(|p| p.name()).collect();
        names.extend(Library::OTHERS.iter().map(|(n, _)| *n));
        names.join(", ")
    }
}

/// A row's stack; every part `None` where the file has no stack columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    /// The engine id (one of [`engine_ids`]) of a model step, request or serving row.
    pub engine: Option<String>,
    /// The engine's version as the source states it (`0.7.3`, `unknown`).
    pub version: Option<String>,
    /// The library of a kernel row.
    pub library: Option<Library>,
    /// What timed the measurement, as the source names it (`hipblaslt-bench`).
    pub harness: Option<String>,
}

impl Stack {
    /// The group a report puts the row in: `engine ID` or `library NAME`; `None` where the
    /// row names neither.
    pub fn group(&self) -> Option<String> {
        match (&self.engine, self.library) {
            (Some(engine), _) => Some(format!("engine {engine}")),
            (None, Some(library)) => Some(format!("library {}", library.name())),
            (None, None) => None,
        }
    }

    /// The kernel path a kernel row's GEMMs run in, where it names one.
    pub fn path(&self) -> Option<KernelPath> {
        self.library.and_then(Library::path)
    }
}

/// The stack columns of a row of kind `kind`, `get` giving a column's text; `present`: whether
/// the file's header has them. A kernel row names a library and a harness and no engine; any
/// other row an engine, its version and a harness, and no library.
pub(super) fn parse_stack(
    get: &dyn Fn(&str) -> String,
    kernel: bool,
    present: bool,
) -> Result<Stack, FieldError> {
    if !present {
        return Ok(Stack::default());
    }
    let given = |column: &'static str, what: &str| {
        let text = get(column);
        if text.is_empty() {
            Err((column, format!("empty; {what}")))
        } else {
            Ok(text)
        }
    };
    let unwanted = |column: &'static str, what: &str| match get(column).as_str() {
        "" => Ok(()),
        text => Err((column, format!("`{text}`: {what}"))),
    };
    let harness = given(
        "harness",
        "expected what timed the measurement (`hipblaslt-bench`, `benchmark_serving.py`, `not stated`)",
    )?;
    if kernel {
        unwanted("engine", "a kernel row names its library, not an engine")?;
        unwanted("version", "a kernel row names no engine version")?;
        let name = given(
            "library",
            &format!(
                "a kernel row names its library, one of {}",
                Library::expected()
            ),
        )?;
        let library = Library::from_name(&name).ok_or_else(|| {
            (
                "library",
                format!(
                    "unknown library `{name}`; expected one of {}",
                    Library::expected()
                ),
            )
        })?;
        return Ok(Stack {
            library: Some(library),
            harness: Some(harness),
            ..Stack::default()
        });
    }
    unwanted(
        "library",
        "a model step, request or serving row names its engine, not a library",
    )?;
    let engines = engine_ids().collect::<Vec<_>>().join(", ");
    let engine = given("engine", &format!("expected one of {engines}"))?;
    if !engine_ids().any(|id| id == engine) {
        return Err((
            "engine",
            format!("unknown engine `{engine}`; expected one of {engines}"),
        ));
    }
    let version = given(
        "version",
        "expected the engine's version as the source states it, or `unknown`",
    )?;
    Ok(Stack {
        engine: Some(engine),
        version: Some(version),
        library: None,
        harness: Some(harness),
    })
}

/// The row ids a baseline list names: one a line, blank lines and `#` comments skipped.
pub fn baseline_ids(text: &str) -> std::collections::HashSet<&str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(cells: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> String + 'a {
        move |name: &str| {
            (cells.iter())
                .find(|(n, _)| *n == name)
                .map_or(String::new(), |(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn a_kernel_row_names_its_path_and_harness() {
        let get = row(&[("library", "deepgemm"), ("harness", "bench_kineto")]);
        let stack = parse_stack(&get, true, true).unwrap();
        assert_eq!(stack.path(), Some(KernelPath::Deepgemm));
        assert_eq!(stack.harness.as_deref(), Some("bench_kineto"));
        let get = row(&[("library", "flash-attention"), ("harness", "x")]);
        assert_eq!(parse_stack(&get, true, true).unwrap().path(), None);
    }

    #[test]
    fn bad_stacks_name_their_column_and_the_expected_values() {
        let get = row(&[("library", "cublas"), ("harness", "x")]);
        let (column, message) = parse_stack(&get, true, true).unwrap_err();
        assert_eq!(column, "library");
        assert!(message.contains("cublaslt") && message.contains("stream"));
        let get = row(&[("engine", "vllm@0.9"), ("version", "0.9"), ("harness", "x")]);
        let (column, message) = parse_stack(&get, false, true).unwrap_err();
        assert_eq!(column, "engine");
        assert!(message.contains("vllm@0.7"));
        let get = row(&[("engine", "vllm"), ("harness", "x")]);
        assert_eq!(parse_stack(&get, false, true).unwrap_err().0, "version");
        let get = row(&[("engine", "vllm"), ("version", "1"), ("library", "triton")]);
        assert_eq!(parse_stack(&get, false, true).unwrap_err().0, "harness");
        let get = row(&[
            ("engine", "vllm"),
            ("version", "1"),
            ("library", "triton"),
            ("harness", "x"),
        ]);
        assert_eq!(parse_stack(&get, false, true).unwrap_err().0, "library");
    }

    #[test]
    fn a_baseline_list_skips_comments_and_blanks() {
        let ids = baseline_ids("# rows\nMAMF-1\n\n  DGEMM-2  # kept\n");
        assert_eq!(ids.len(), 2);
        assert!(ids.contains("MAMF-1") && ids.contains("DGEMM-2"));
    }

    #[test]
    fn a_file_without_the_columns_names_no_stack() {
        let get = row(&[]);
        assert_eq!(parse_stack(&get, true, false), Ok(Stack::default()));
    }
}
