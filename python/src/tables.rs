//! Typed tables handed to Python: as Arrow record batches through the Arrow PyCapsule
//! interface (`__arrow_c_stream__`, which `pyarrow.table`, polars and others read without a
//! copy), or a row as a `dict` of Python values (no pyarrow needed).

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use stepcost::{sweep::Cell, sweep::TypedTable};

use crate::errors::input;

/// Record batches, read once as an Arrow C stream.
#[pyclass(module = "stepcost")]
pub struct ArrowStream {
    batches: Option<(SchemaRef, Vec<RecordBatch>)>,
    rows: usize,
}

impl ArrowStream {
    /// The stream of `table`'s batches.
    pub fn of(py: Python<'_>, table: TypedTable) -> PyResult<ArrowStream> {
        let rows = table.rows();
        let batches = py
            .detach(|| table.into_record_batches())
            .map_err(|e| input(e.to_string()))?;
        Ok(ArrowStream {
            batches: Some(batches),
            rows,
        })
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow PyCapsule interface: a capsule holding an `ArrowArrayStream` of the
    /// batches. The batches move out: a second call is an error.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is the table's own; a consumer that asks for another casts it.
        let _ = requested_schema;
        let (schema, batches) = self
            .batches
            .take()
            .ok_or_else(|| input("this table's Arrow stream was already read"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Rows in the stream.
    fn __len__(&self) -> usize {
        self.rows
    }
}

/// A cell as a Python value: `None`, `float`, `int`, `bool` or `str`.
fn value<'py>(py: Python<'py>, cell: Cell<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match cell {
        Cell::Null => py.None().into_bound(py),
        Cell::Number(x) => x.into_pyobject(py)?.into_any(),
        Cell::Integer(n) => n.into_pyobject(py)?.into_any(),
        Cell::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Cell::Text(s) => s.into_pyobject(py)?.into_any(),
    })
}

/// Row `row` of `table` as a dict of column to value, in column order.
pub fn row_dict<'py>(
    py: Python<'py>,
    table: &TypedTable,
    row: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let cells = table.row(row).unwrap_or_default();
    for ((name, _), cell) in table.columns().iter().zip(cells) {
        dict.set_item(name, value(py, cell)?)?;
    }
    Ok(dict)
}
