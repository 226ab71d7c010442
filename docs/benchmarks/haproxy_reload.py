"""HAProxy and a reload of the back (docs/benchmarks.md): servertune's generated haproxy.cfg,
optionally edited, in front of nginx answering 200 itself, both on 127.0.0.1; USERS threads loop
keep-alive GETs through HAProxy (a new connection per GET with CLOSE=1) while nginx is reloaded
RELOADS times, every INTERVAL s. Prints one JSON line: GETs answered, lost (closed without an
answer), resent (HAProxy's retries field, from its log), p50/p99, req/s, and the backend's new
connections and reuses (stats socket).

    python docs/benchmarks/haproxy_reload.py reload 32 150 0.25 as-is
    python docs/benchmarks/haproxy_reload.py reload 32 150 0.25 'http-reuse never=>http-reuse always'

VARIANT is `as-is` or `old=>new` edits of the generated file joined by `;` (`\\n` for a new line).
Mode `slow`: one GET to a server that accepts and never answers, the per-try timeout edited to
1 s: how many times HAProxy sent it. Needs nginx and haproxy on PATH."""
import collections, http.client, json, os, re, signal, socket, subprocess, sys, tempfile, threading, time
from pathlib import Path
from servertune.render import render_haproxy
from servertune.sizing import plan_for
from servertune.workload import Workload

MODE, USERS, RELOADS, INTERVAL, VARIANT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
CLOSE = os.environ.get("CLOSE") == "1"
LB, NG = 18000 + os.getpid() % 1000, 19000 + os.getpid() % 1000
w = Workload.model_validate({"cores": 1, "service_time_ms": 5.0, "cpu_fraction": 0.5, "app": "m:app",
    "listen_host": "127.0.0.1", "listen_port": NG, "lb_listen_host": "127.0.0.1", "lb_listen_port": LB})
home = Path(tempfile.mkdtemp(prefix="haproxy-reload-"))
cfg = render_haproxy(plan_for(w))
cfg = cfg.replace("global\n", f"global\n    log stdout format raw local0\n    stats socket {home}/admin.sock level admin\n", 1)
cfg = cfg.replace("defaults\n", "defaults\n    log global\n    option httplog\n", 1)
if VARIANT != "as-is":
    for edit in VARIANT.split(";"):
        old, new = edit.split("=>")
        assert old in cfg, old
        cfg = cfg.replace(old, new.replace("\\n", "\n"))
if MODE == "slow":
    cfg = re.sub(r"set-timeout server \d+s", "set-timeout server 1s", cfg)
(home / "haproxy.cfg").write_text(cfg)
chk = subprocess.run(["haproxy", "-c", "-f", str(home / "haproxy.cfg")], capture_output=True, text=True)
assert chk.returncode == 0, chk.stdout + chk.stderr

def stat() -> dict[str, int]:
    s = socket.socket(socket.AF_UNIX); s.connect(str(home / "admin.sock")); s.sendall(b"show stat\n")
    data = b""
    while chunk := s.recv(65536): data += chunk
    s.close()
    lines = data.decode().splitlines(); head = lines[0].lstrip("# ").split(",")
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") == "servertune_nginx" and row.get("svname") == "BACKEND":
            return {k: int(row[k] or 0) for k in ("connect", "reuse", "wretr")}
    return {}

hp = subprocess.Popen(["haproxy", "-W", "-db", "-f", str(home / "haproxy.cfg")], stdout=open(home / "haproxy.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
def wait_port(port):
    for _ in range(200):
        try: socket.create_connection(("127.0.0.1", port), 0.1).close(); return
        except OSError: time.sleep(0.02)
    raise SystemExit(f"port {port} never opened")

if MODE == "slow":
    arrivals = []; srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", NG)); srv.listen(64); held = []
    def accept():
        while True:
            try: c, _ = srv.accept()
            except OSError: return
            held.append(c); c.settimeout(5)
            try:
                if c.recv(65536).startswith(b"GET"): arrivals.append(time.monotonic())
            except OSError: pass
    threading.Thread(target=accept, daemon=True).start()
    try:
        wait_port(LB); t0 = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", LB, timeout=30); conn.request("GET", "/slow")
        r = conn.getresponse(); r.read()
        print(json.dumps({"mode": "slow", "variant": VARIANT, "status": r.status, "sent": len(arrivals),
                          "resent": len(arrivals) - 1, "waited_s": round(time.monotonic() - t0, 2)}))
    finally:
        os.killpg(hp.pid, signal.SIGTERM); hp.wait(10); srv.close()
    raise SystemExit(0)

(home / "nginx.conf").write_text(f"""worker_processes 1; pid nginx.pid; error_log error.log warn;
events {{ worker_connections 1024; }}
http {{ access_log off; keepalive_timeout 65s;
  server {{ listen 127.0.0.1:{NG}; location / {{ return 200 "ok\\n"; }} }} }}
""")
for d in ("client_body_temp", "proxy_temp", "fastcgi_temp", "uwsgi_temp", "scgi_temp"):
    (home / d).mkdir()
ng = subprocess.Popen(["nginx", "-p", f"{home}/", "-c", str(home / "nginx.conf"), "-g", "daemon off;"], start_new_session=True)
wait_port(NG); wait_port(LB)
stop = threading.Event(); res = collections.Counter(); lock = threading.Lock(); lat: list[float] = []
started = threading.Barrier(USERS + 1)
def user():
    conn = None; mine = []; started.wait()
    while not stop.is_set():
        t = time.perf_counter()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", LB, timeout=10)
            conn.request("GET", "/quick", headers={"Connection": "close"} if CLOSE else {})
            r = conn.getresponse(); r.read(); st = r.status
            if CLOSE: conn.close(); conn = None
        except (OSError, http.client.HTTPException):
            st = 0
            if conn: conn.close()
            conn = None
        mine.append(time.perf_counter() - t)
        with lock: res[st] += 1
        time.sleep(0.002)
    with lock: lat.extend(mine)
threads = [threading.Thread(target=user, daemon=True) for _ in range(USERS)]
t0 = time.monotonic()
try:
    for t in threads: t.start()
    started.wait(); time.sleep(0.5)
    for _ in range(RELOADS):
        ng.send_signal(signal.SIGHUP); time.sleep(INTERVAL)
    time.sleep(0.5)
finally:
    stop.set()
    for t in threads: t.join(11)
    st = stat()
    os.killpg(hp.pid, signal.SIGTERM); os.killpg(ng.pid, signal.SIGQUIT)
    hp.wait(10); ng.wait(10)
took = time.monotonic() - t0
log = (home / "haproxy.log").read_text()
retries = collections.Counter(int(m) for m in re.findall(r"(?:\d+/){4}\+?(\d+) \d+/\d+ \"", log))
lat.sort()
print(json.dumps({"mode": "reload" + ("-close" if CLOSE else ""), "variant": VARIANT, "users": USERS, "reloads": RELOADS, "interval": INTERVAL,
    "answered": res[200], "lost": res[0], "other": {k: v for k, v in res.items() if k not in (0, 200)},
    "resent": sum(k * v for k, v in retries.items()), "retries_hist": dict(sorted(retries.items())),
    "p50_ms": round(lat[len(lat) // 2] * 1000, 2), "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 2),
    "max_ms": round(lat[-1] * 1000, 1), "rps": round(sum(res.values()) / took), **st}))
subprocess.run(["rm", "-rf", str(home)])
