#!/bin/sh
exec python3 -u -X dev -m uvicorn shop.asgi:app --workers 2
