"""The ASGI application that Hypercorn's workers load: ``app.asgi:application``."""

from app import create_app

application = create_app()
