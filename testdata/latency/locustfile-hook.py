from locust import HttpUser, constant, task
import memdiag_hook  # noqa: F401  per-request rows for memdiag

class Probe(HttpUser):
    wait_time = constant(0.1)

    @task
    def root(self):
        self.client.get("/")

    @task
    def refused(self):
        self.client.get("http://127.0.0.1:18939/", name="refused")
