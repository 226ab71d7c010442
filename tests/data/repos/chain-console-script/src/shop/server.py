"""The shop's own command: `shop-server --port 8000`."""

import click
import uvicorn


@click.command()
@click.option("--host", default="0.0.0.0", help="Address to listen on")
@click.option("--port", "-p", default=8000, help="Port to listen on")
@click.option("--workers", default=1, help="Worker processes")
@click.option("--reload", is_flag=True, default=False)
def main(host: str, port: int, workers: int, reload: bool) -> None:
    uvicorn.run(
        "shop.app:app",
        host=host,
        port=port,
        workers=workers,
        reload=reload,
        timeout_keep_alive=20,
    )


if __name__ == "__main__":
    main()
