#!/bin/sh
exec uvicorn $APP --workers 2
