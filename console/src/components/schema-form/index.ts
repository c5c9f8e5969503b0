/** The form generated from a tool's input schema (JSON Schema), with a JSON mode. */
export { type ErrorFor, SchemaFields } from './fields';
export { formRenders, type JsonSchema, kindOf } from './schema';
export { type InputMode, SchemaInput, type SchemaInputState, useSchemaInput } from './schema-input';
export { type Converted, type FormObject, type FormValue, formValuesOf, initialValues, toInput } from './values';
