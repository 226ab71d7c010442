import os

import uvicorn

if __name__ == "__main__":
    uvicorn.run(
        "shop.asgi:app", host="0.0.0.0", port=int(os.environ.get("PORT", "9000")), workers=2
    )
