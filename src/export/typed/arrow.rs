//! A [`TypedTable`] as Arrow record batches (the `arrow` cargo feature): each column's values
//! move into an Arrow buffer without being copied, and its nulls become a validity bitmap.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use super::{TypedTable, TypedValues};
use crate::export::rows::ColumnType;

impl TypedTable {
    /// The table's Arrow schema: a nullable field per column, `Float64` for numbers, `Int64`
    /// for counts, `Boolean`, `Utf8` for text (the Parquet file's types).
    pub fn arrow_schema(&self) -> SchemaRef {
        let fields: Vec<Field> = (self.columns.iter())
            .map(|(name, kind)| {
                let data_type = match kind {
                    ColumnType::Number => DataType::Float64,
                    ColumnType::Integer => DataType::Int64,
                    ColumnType::Boolean => DataType::Boolean,
                    ColumnType::Text => DataType::Utf8,
                };
                Field::new(name, data_type, true)
            })
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The schema and one record batch per batch of the table, in order.
    pub fn into_record_batches(self) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
        let schema = self.arrow_schema();
        let batches = (self.batches.into_iter())
            .map(|batch| {
                let columns: Vec<ArrayRef> = batch
                    .into_columns()
                    .into_iter()
                    .map(array)
                    .collect::<Result<_, _>>()?;
                RecordBatch::try_new(schema.clone(), columns)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((schema, batches))
    }
}

/// A column's values as an Arrow array.
fn array(values: TypedValues) -> Result<ArrayRef, ArrowError> {
    let nulls = |valid: Vec<bool>| match valid.iter().all(|v| *v) {
        true => None,
        false => Some(NullBuffer::from(valid)),
    };
    Ok(match values {
        TypedValues::Number { values, valid } => Arc::new(Float64Array::try_new(
            ScalarBuffer::from(values),
            nulls(valid),
        )?),
        TypedValues::Integer { values, valid } => Arc::new(Int64Array::try_new(
            ScalarBuffer::from(values),
            nulls(valid),
        )?),
        TypedValues::Boolean { values, valid } => {
            Arc::new(BooleanArray::new(BooleanBuffer::from(values), nulls(valid)))
        }
        TypedValues::Text {
            text,
            offsets,
            valid,
        } => Arc::new(StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from(text.into_bytes()),
            nulls(valid),
        )?),
    })
}
