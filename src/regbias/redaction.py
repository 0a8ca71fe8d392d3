"""Credentials never leave regbias in clear: a URI's password and a token in its query.

``MLFLOW_TRACKING_URI=http://alice:s3cret@host/`` is how MLflow takes a server's basic-auth
password, and a presigned URL carries its signature in the query. Every line regbias prints or
logs, every param, tag and description it writes to MLflow, and the composed config it stores
go through :func:`redacted`, which keeps the user name and host (so the message still says
where) and puts :data:`HIDDEN` where the secret was. The connection itself uses the URI as given.
"""

from __future__ import annotations

import logging
import re

#: What stands where a secret was.
HIDDEN = "***"
#: ``scheme://user:password@``: the password (up to the last ``@`` before the host's path).
_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:@/?#]*:)[^\s/?#]*@")
#: Query parameters that carry a credential (``?token=...``, ``&X-Amz-Signature=...``).
_SECRET_QUERY = re.compile(
    r"(?P<head>[?&](?:[A-Za-z0-9_.-]*(?:token|password|passwd|secret|signature|credential|"
    r"api[_-]?key|access[_-]?key)|key|sig|sas|auth)=)[^&\s#'\"]*",
    re.IGNORECASE,
)


def redacted(text: str) -> str:
    """``text`` with every URI password and credential query value replaced by :data:`HIDDEN`."""
    text = _PASSWORD.sub(rf"\g<head>{HIDDEN}@", text)
    return _SECRET_QUERY.sub(rf"\g<head>{HIDDEN}", text)


class RedactingFilter(logging.Filter):
    """A handler filter that redacts a record's message and its traceback before it is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place; always keep it."""
        message = record.getMessage()
        clean = redacted(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redacted(record.exc_text)
        return True


def redact_logging() -> None:
    """Put a :class:`RedactingFilter` on every handler of the root logger (once each)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
