from locust import HttpUser, task, constant

class Probe(HttpUser):
    wait_time = constant(0.5)

    @task(3)
    def hello(self):
        self.client.get("/hello.txt")

    @task(1)
    def missing(self):
        self.client.get("/missing")
