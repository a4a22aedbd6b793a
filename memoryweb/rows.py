"""Model instances from rows of hand-written SQL, for the few lookups every API request makes.

Building and compiling a queryset costs the ORM 0.35–1.2 ms of CPU per query on this machine,
the database a few hundredths of that; the token, the scope and the caller's role are read on
every request (accounts/tokens.py, memories/scopes.py). Their SQL is written once; the columns
come from the model's fields (`columns`), and `instance` turns a row back into a model with the
same converters the ORM applies (a JSONField's text decoded, and so on)."""

import functools

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Model


def columns(model: type[Model], alias: str) -> str:
    """`alias."id", alias."public_id", …`: every concrete column of `model`, in field order."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(field.column)}" for field in model._meta.concrete_fields)


def instance(model: type[Model], row, start: int = 0) -> Model:
    """The `model` whose columns (as `columns` lists them) begin at `row[start]`."""
    names, converters = _reading(model)
    values = list(row[start:start + len(names)])
    for index, convert, expression in converters:
        values[index] = convert(values[index], expression, connection)
    return model.from_db(DEFAULT_DB_ALIAS, names, values)


@functools.cache
def _reading(model: type[Model]) -> tuple[list[str], list]:
    fields = model._meta.concrete_fields
    converters = []
    for index, field in enumerate(fields):
        expression = field.get_col(model._meta.db_table)
        for convert in connection.ops.get_db_converters(expression) + expression.get_db_converters(connection):
            converters.append((index, convert, expression))
    return [field.attname for field in fields], converters
