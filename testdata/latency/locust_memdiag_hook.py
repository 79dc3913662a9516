# memdiag's Locust request hook: one row per request, as it completes, in
# memdiag's generic CSV (timestamp = request start, Unix s; latency in ms;
# status 0 = no response; error = Locust's exception text).
# Import it from your locustfile:  import memdiag_hook  # noqa: F401
import csv, os
from locust import events

_out = None

@events.init.add_listener
def _open(environment, **_):
    global _out
    f = open(os.environ.get("MEMDIAG_LOCUST_CSV", "locust_requests.csv"), "w", newline="", buffering=1)
    _out = csv.writer(f, lineterminator="\n")
    _out.writerow(["timestamp", "latency_ms", "status", "error"])

@events.request.add_listener
def _row(response_time, response=None, exception=None, start_time=None, **_):
    status = getattr(response, "status_code", 0) or 0
    error = "" if exception is None else " ".join(str(exception).split())
    _out.writerow([f"{start_time:.6f}", f"{response_time:.3f}", status, error])
