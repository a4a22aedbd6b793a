"""Domain errors. Services raise these; each door maps them to its own output once
(HTTP status in the API, an exit code in the CLI, an MCP error)."""


class MemorywebError(Exception):
    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidInput(MemorywebError):
    status = 422


class NotFound(MemorywebError):
    status = 404


class Forbidden(MemorywebError):
    status = 403


class Conflict(MemorywebError):
    status = 409


class TooLarge(MemorywebError):
    status = 413
