"""The integrations' scheduled job."""

from ..maintenance.runner import HOURLY, Budget, JobResult
from .service import IntegrationService


class IntegrationSync:
    """The hourly sync of every connected integration (app/integrations/service.py), each bounded; what a run leaves
    waits for the next."""

    name = "integrations"
    schedule = HOURLY

    def __init__(self, service: IntegrationService) -> None:
        self.service = service

    def run(self, budget: Budget, cursor: str) -> JobResult:
        # No cursor: each mirror says what it was synced from, so a run that stopped early starts over cheaply.
        done = self.service.sync_all(budget.expired)["integrations"]
        counts = {key: sum(d[key] for d in done) for key in ("created", "updated", "removed")}
        errors = [f"{d['id']}: {d['error']}" for d in done if d["error"]]
        return JobResult(counts={"integrations": len(done), **counts}, cursor="",
                         complete=all(d["complete"] for d in done), errors=errors)
