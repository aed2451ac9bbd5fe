"""The AWS composition root: the same application services as on a laptop, over cloud adapters.

Clients are made here, once per Lambda container, and can be injected (moto and Stubber in tests).
"""

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from aws_lambda_powertools.utilities.parameters import SecretsProvider, SSMProvider
from botocore.config import Config
from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

from ..adapters.blobs.s3 import S3BlobStore
from ..adapters.embedder.bedrock import BedrockTitanEmbedder
from ..adapters.embedder.sagemaker import SageMakerEmbedder
from ..adapters.event_store.dynamodb import SLOTS_PER_MS, DynamoDBEventStore
from ..adapters.event_store.keys import KmsKeyring
from ..adapters.event_store.projecting import ProjectingEventStore
from ..adapters.event_store.tally import DynamoDBRecallTally
from ..adapters.llm.bedrock import BedrockConverseModel
from ..adapters.llm.none import NoLanguageModel
from ..adapters.opensearch.index import OpenSearchIndex
from ..adapters.reranker.bedrock import BedrockReranker
from ..adapters.reranker.sagemaker import SageMakerReranker
from ..adapters.secrets.secretsmanager import SecretsManagerSecrets
from ..app.maintenance.runner import NIGHTLY
from ..app.team.service import TeamService
from ..bootstrap import Brain, assemble, single_threaded_blas
from ..domain.events import MemoryOpened, MemoryRecalled
from ..domain.identity import owner
from ..ports.clock import SystemClock
from ..ports.embedder import Embedder
from ..ports.event_store import EventStore, settled_pages
from ..ports.llm import LanguageModel
from ..ports.reranker import Reranker
from ..settings import Settings

# Every AWS call is bounded: a hung connection must fail inside the function's timeout, not at it. Standard
# retry mode backs off on throttling; three attempts at most.
CONNECT_SECONDS = 3.0
READ_SECONDS = 10.0
RETRIES = {"mode": "standard", "max_attempts": 3}
# Counting a recall or an open needs no read-your-writes: the stream projector carries it to OpenSearch, so the
# request that recorded it does not wait for the projection (under Mangum deferred work runs before the reply).
NOT_PROJECTED_INLINE = (MemoryRecalled, MemoryOpened)
SERVICE_CONFIG = {"s3": {"signature_version": "s3v4"}}  # presigned URLs signed as every region accepts
TOKEN_MAX_AGE = 300  # seconds the owner token read from its secret is used before it is read again


# What a default session is made from: a change of any of these (a test's, or a profile's) makes a new one.
SESSION_ENVIRONMENT = ("AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID",
                       "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
_sessions: dict[tuple[str | None, ...], boto3.Session] = {}
_sessions_lock = threading.Lock()  # a boto3 Session is not safe to share between threads: clients are made under it


def default_session() -> boto3.Session:
    """One boto3 session per process and environment. A session parses each service's model (and the endpoints
    file, ~1 MB of JSON) once, when its first client of that service is made: a new session for every client,
    as before, parsed them again for each (a Lambda's cold start paid it once per client)."""
    environment = tuple(os.environ.get(name) for name in SESSION_ENVIRONMENT)
    with _sessions_lock:
        if environment not in _sessions:
            _sessions.clear()
            _sessions[environment] = boto3.Session()
        return _sessions[environment]


@dataclass
class Clients:
    """AWS and OpenSearch clients; whatever is not given is made from the default session.

    A client is made once per service and read timeout, with bounded connect and read timeouts and retries."""

    session: Any = None
    made: dict[tuple[str, float], Any] = field(default_factory=dict)
    opensearch: OpenSearch | None = None

    def __call__(self, service: str, read_timeout: float = READ_SECONDS) -> Any:
        if (service, read_timeout) not in self.made:
            config = Config(connect_timeout=CONNECT_SECONDS, read_timeout=read_timeout, retries=RETRIES,
                            **SERVICE_CONFIG.get(service, {}))
            if self.session is not None:
                self.made[service, read_timeout] = self.session.client(service, config=config)
            else:
                session = default_session()
                with _sessions_lock:
                    self.made[service, read_timeout] = session.client(service, config=config)
        return self.made[service, read_timeout]


@dataclass
class AwsBrain:
    brain: Brain
    index: OpenSearchIndex
    log: DynamoDBEventStore
    blobs: S3BlobStore | None = None  # backups past Lambda's 6 MB

    def with_indexes(self) -> "AwsBrain":
        """This brain, once its OpenSearch indexes are sure to exist (a function that serves or projects)."""
        self.index.create()
        return self

    def refresh(self) -> None:
        """What was just projected, searchable now rather than at the next refresh interval."""
        self.index.flush()

    def prepare_upkeep(self, schedule: str) -> dict[str, Any]:
        """Before the nightly jobs: the indexes made sure of, and the forgets whose erasure a failure left halfway
        finished, before anything else reads the log."""
        if schedule != NIGHTLY:
            return {"erasures_finished": 0}
        self.index.create()
        finished = self.log.complete_erasures()
        # What is still unfinished after that is a backlog the ErasureBacklogAlarm says (the ErasuresPending metric).
        return {"erasures_finished": finished, "erasures_pending": self.log.pending_erasures()}

    def finish_upkeep(self, schedule: str) -> dict[str, Any]:
        """After the nightly jobs (they rewrite documents too): the day's deleted documents merged out of the indexes'
        segments, where a forgotten memory's text stays on disk, and in each hourly snapshot, until then."""
        if schedule != NIGHTLY:
            return {}
        self.index.expunge_deletes()
        return {"deletes_expunged": True}


def build_aws(settings: Settings, clients: Clients | None = None) -> AwsBrain:
    single_threaded_blas()
    clients = clients or Clients()
    log = event_log(settings, clients)
    embedder = aws_embedder(settings, clients)
    index = OpenSearchIndex(clients.opensearch or opensearch_client(settings), log, settings.opensearch_prefix,
                            embedder.dimension if embedder else settings.embedding_dimension,
                            replicas=settings.opensearch_replicas)
    store = ProjectingEventStore(log, [index] if settings.project_inline else [], skip=NOT_PROJECTED_INLINE)
    keyring = log.keyring
    brain = assemble(settings, SystemClock(), store, index.read_model, index.vectors, embedder,
                     aws_llm(settings, clients), aws_reranker(settings, clients), worker=False,
                     background_classification=False,  # Lambda freezes threads after the response
                     index_check=index.check,
                     # its own projection just wrote the entry: a capture stores its vectors, not the projector
                     index_at_capture=settings.project_inline,
                     content_key=(lambda: keyring.secret(BRAIN_SECRET)) if keyring else None,
                     # a recall notes its memories (one PutItem); the hourly job folds them into the log
                     recall_tally=DynamoDBRecallTally(clients("dynamodb"), settings.events_table),
                     secret_store=SecretsManagerSecrets(clients("secretsmanager"), settings.secrets_prefix,
                                                        settings.data_key_id),
                     local_folders=False)  # a function's disk holds no one's notes
    blobs = S3BlobStore(clients("s3"), settings.transfer_bucket) if settings.transfer_bucket else None
    aws = AwsBrain(brain, index, log, blobs)
    brain.prepare_upkeep, brain.finish_upkeep, brain.settle = aws.prepare_upkeep, aws.finish_upkeep, aws.refresh
    return aws


def build_access(settings: Settings, clients: Clients) -> tuple[EventStore, TeamService]:
    """What checking a bearer token (and serving OAuth's flow) needs, without the brain or OpenSearch: the log,
    and the team read from it."""
    log = event_log(settings, clients)
    return log, TeamService(log, SystemClock(), owner(settings.owner_name))


BRAIN_SECRET = "$brain"  # the key table's entry keying the claim streams' hashes of texts (no memory's id)


def event_log(settings: Settings, clients: Clients) -> DynamoDBEventStore:
    """The DynamoDB log; with a key table and a KMS key, each memory's events sealed under a key of its own."""
    keyring = None
    if settings.keys_table and settings.data_key_id:
        keyring = KmsKeyring(clients("kms"), clients("dynamodb"), settings.keys_table, settings.data_key_id)
    return DynamoDBEventStore(clients("dynamodb"), settings.events_table, keyring=keyring)


SEALED_WITHOUT_KEYS = ("This log's memory events are sealed: set BRAIN_KEYS_TABLE and BRAIN_DATA_KEY_ID as the "
                       "functions have them (the stack's KeysTableName and DataKeyArn outputs), then replay again. "
                       "Nothing was changed.")


class ReplayRefused(Exception):
    """A replay that cannot succeed with these settings, refused before it changes anything."""


@dataclass(frozen=True)
class Replayed:
    events: int  # projected
    embedded: int  # memories given their vectors
    position: int  # every event up to it is projected: catch up from it (`after`)


def replay(settings: Settings, progress: Callable[[int], None] = lambda events: None,
           after: int | None = None) -> Replayed:
    """Fresh OpenSearch indexes from the DynamoDB log, then embeddings for every memory, all searchable when it
    returns. The log is read up to its settled position (an append in flight may still land below the head: the
    log's SETTLE_MS), then again, once it has settled, up to the moment the replay began (a wait of what is left of
    that minute): everything written before the replay began is projected. The answer's `position` is how far:
    replayed into a new prefix while the functions write to the old one, the writes made meanwhile come in by a
    catch-up `after` it, run once the functions write to the new prefix (a stream projected twice is rebuilt from
    the log each time, so the catch-up may overlap the stream's projector). With `after`, the indexes are kept
    and only the events after it are projected. `progress(events projected so far)`."""
    aws = build_aws(settings)
    if not (settings.keys_table and settings.data_key_id) and aws.log.sealed:  # before the indexes are dropped
        raise ReplayRefused(SEALED_WITHOUT_KEYS)
    log = aws.log
    begun = log.cut(log.clock())  # every append begun before the replay lands at or below it
    if after is None:
        aws.index.drop()
    aws.index.create()
    events, position = 0, after or 0
    while True:  # the log as far as it has settled; then what had not settled when the replay began, once it has
        settled = log.settled()
        for page in settled_pages(log, position, 1000, settled):
            aws.index.apply(page)
            events += len(page)
            progress(events)
        position = max(position, settled)
        if position >= begun:
            break
        time.sleep(min(1.0, (begun - position) / SLOTS_PER_MS / 1000 + 0.01))
    embedded = 0
    while aws.brain.indexer and (report := aws.brain.indexer.run_once(256)).vectorized:
        embedded += report.vectorized
    aws.refresh()  # searchable when the replay returns, not a refresh interval later
    return Replayed(events, embedded, position)


def opensearch_client(settings: Settings) -> OpenSearch:
    """SigV4-signed for an AWS domain (https), plain for a local node (http)."""
    if not settings.opensearch_url:
        raise ValueError("BRAIN_OPENSEARCH_URL is not set")
    # Shorter than the API's 28 s: a slow search answers 503 in the envelope, not a gateway timeout.
    timeout = settings.opensearch_timeout
    # opensearch-py logs every request at INFO: in CloudWatch that is a paid line per round trip, and time.
    logging.getLogger("opensearch").setLevel(logging.WARNING)
    if settings.opensearch_url.startswith("http://"):
        return OpenSearch(settings.opensearch_url, timeout=timeout)
    session = default_session()
    auth = AWSV4SignerAuth(session.get_credentials(), session.region_name or os.environ.get("AWS_REGION", ""), "es")
    return OpenSearch(settings.opensearch_url, http_auth=auth, use_ssl=True, verify_certs=True,
                      connection_class=RequestsHttpConnection, timeout=timeout, max_retries=2,
                      retry_on_timeout=False)


def aws_embedder(settings: Settings, clients: Clients) -> Embedder | None:
    if settings.embedder == "bedrock":
        return BedrockTitanEmbedder(clients("bedrock-runtime"), settings.embedding_model, settings.embedding_dimension)
    if settings.embedder == "sagemaker":
        if not settings.embedding_endpoint:
            raise ValueError("BRAIN_EMBEDDING_ENDPOINT is needed with BRAIN_EMBEDDER=sagemaker")
        return SageMakerEmbedder(clients("sagemaker-runtime"), settings.embedding_endpoint,
                                 settings.embedding_dimension)
    return None


def aws_reranker(settings: Settings, clients: Clients) -> Reranker | None:
    if settings.reranker == "bedrock":
        region = os.environ.get("AWS_REGION") or clients("bedrock-agent-runtime").meta.region_name
        return BedrockReranker(clients("bedrock-agent-runtime"), region)
    if settings.reranker == "sagemaker" and settings.reranker_endpoint:
        return SageMakerReranker(clients("sagemaker-runtime"), settings.reranker_endpoint)
    return None


def aws_llm(settings: Settings, clients: Clients) -> LanguageModel:
    if settings.llm == "bedrock":  # its own client: a model's answer takes longer than an embedding
        return BedrockConverseModel(clients("bedrock-runtime", read_timeout=settings.llm_timeout), settings.llm_model)
    return NoLanguageModel()


def owner_token(settings: Settings, clients: Clients, max_age: int = TOKEN_MAX_AGE) -> Callable[[], str]:
    """The owner's bearer token from Secrets Manager or an SSM SecureString (never a plain parameter), as a
    function: read again once `max_age` seconds old, so a rotated token is taken up without a redeploy."""
    if settings.auth_token_secret:
        secrets = SecretsProvider(boto3_client=clients("secretsmanager"))
        name = settings.auth_token_secret

        def read() -> str:
            return str(secrets.get(name, max_age=max_age)).strip()
    elif settings.auth_token_parameter:
        ssm = SSMProvider(boto3_client=clients("ssm"))
        name = settings.auth_token_parameter

        def read() -> str:
            return str(ssm.get(name, max_age=max_age, decrypt=True)).strip()
    else:
        raise ValueError("Set BRAIN_AUTH_TOKEN_SECRET or BRAIN_AUTH_TOKEN_PARAMETER")
    read()  # a missing secret fails the cold start, not the first request
    return read
