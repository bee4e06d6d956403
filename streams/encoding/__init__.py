"""How samples are written and checked: JSON and Avro codecs, schemas, schema files."""
