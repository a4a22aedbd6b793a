"""Checking short strings that callers send, with errors that name the field."""

from memoryweb.errors import InvalidInput


def clean_label(value, *, what: str, max_length: int, required: bool = False, missing: str = "is required") -> str:
    """A short string from a caller: stripped, bounded, no NUL; `what` names it in the error."""
    if value is None:
        value = ""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string.")
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"{what} {missing}.")
    if len(value) > max_length:
        raise InvalidInput(f"{what} is longer than {max_length} characters.")
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL character.")
    return value
