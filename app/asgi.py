"""The ASGI application that Hypercorn's workers load: ``app.asgi:application``.

Each worker logs as EARFUL_LOG_FORMAT says (app/logs.py), Hypercorn's own lines included.
"""

from app import create_app
from app.config import load_settings
from app.logs import configure_logging

settings = load_settings()
configure_logging(settings.log_format)
application = create_app(settings)
