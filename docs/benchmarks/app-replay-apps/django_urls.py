import hashlib
import time

from django.http import JsonResponse
from django.urls import path


def item(request, item_id: int):
    digest = hashlib.sha256(str(item_id).encode() * 200).hexdigest()
    return JsonResponse({"id": item_id, "digest": digest[:16]})


def io(request):
    time.sleep(0.05)  # an upstream call
    return JsonResponse({"ok": "io"})


def report(request):
    time.sleep(0.3)  # a slow query
    return JsonResponse({"ok": "report"})


urlpatterns = [
    path("items/<int:item_id>", item),
    path("io", io),
    path("report", report),
]
