"""The AWS composition root: the same application services as on a laptop, over cloud adapters.

Clients are made here, once per Lambda container, and can be injected (moto and Stubber in tests).
"""

import os
from dataclasses import dataclass, field
from typing import Any

import boto3
from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

from ..adapters.embedder.bedrock import BedrockTitanEmbedder
from ..adapters.embedder.sagemaker import SageMakerEmbedder
from ..adapters.event_store.dynamodb import DynamoDBEventStore
from ..adapters.event_store.projecting import ProjectingEventStore
from ..adapters.llm.bedrock import BedrockConverseModel
from ..adapters.llm.none import NoLanguageModel
from ..adapters.opensearch.index import OpenSearchIndex
from ..adapters.reranker.bedrock import BedrockReranker
from ..adapters.reranker.sagemaker import SageMakerReranker
from ..bootstrap import Brain, assemble
from ..ports.clock import SystemClock
from ..ports.embedder import Embedder
from ..ports.llm import LanguageModel
from ..ports.reranker import Reranker
from ..settings import Settings


@dataclass
class Clients:
    """AWS and OpenSearch clients; whatever is not given is made from the default session."""

    session: Any = None
    made: dict[str, Any] = field(default_factory=dict)
    opensearch: OpenSearch | None = None

    def __call__(self, service: str) -> Any:
        if service not in self.made:
            self.made[service] = (self.session or boto3.Session()).client(service)
        return self.made[service]


@dataclass
class AwsBrain:
    brain: Brain
    index: OpenSearchIndex
    log: DynamoDBEventStore


def build_aws(settings: Settings, clients: Clients | None = None) -> AwsBrain:
    clients = clients or Clients()
    log = DynamoDBEventStore(clients("dynamodb"), settings.events_table)
    embedder = aws_embedder(settings, clients)
    index = OpenSearchIndex(clients.opensearch or opensearch_client(settings), log, settings.opensearch_prefix,
                            embedder.dimension if embedder else settings.embedding_dimension)
    store = ProjectingEventStore(log, [index] if settings.project_inline else [])
    brain = assemble(settings, SystemClock(), store, index.read_model, index.vectors, embedder,
                     aws_llm(settings, clients), aws_reranker(settings, clients), worker=False,
                     background_classification=False)  # Lambda freezes threads after the response
    return AwsBrain(brain, index, log)


def opensearch_client(settings: Settings) -> OpenSearch:
    """SigV4-signed for an AWS domain (https), plain for a local node (http)."""
    if not settings.opensearch_url:
        raise ValueError("BRAIN_OPENSEARCH_URL is not set")
    if settings.opensearch_url.startswith("http://"):
        return OpenSearch(settings.opensearch_url, timeout=30)
    session = boto3.Session()
    auth = AWSV4SignerAuth(session.get_credentials(), session.region_name or os.environ.get("AWS_REGION", ""), "es")
    return OpenSearch(settings.opensearch_url, http_auth=auth, use_ssl=True, verify_certs=True,
                      connection_class=RequestsHttpConnection, timeout=30)


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
    if settings.llm == "bedrock":
        return BedrockConverseModel(clients("bedrock-runtime"), settings.llm_model)
    return NoLanguageModel()


def owner_token(settings: Settings, clients: Clients) -> str:
    """The owner's bearer token from Secrets Manager or an SSM SecureString; never a plain parameter."""
    if settings.auth_token_secret:
        return clients("secretsmanager").get_secret_value(SecretId=settings.auth_token_secret)["SecretString"].strip()
    if settings.auth_token_parameter:
        parameter = clients("ssm").get_parameter(Name=settings.auth_token_parameter, WithDecryption=True)
        return parameter["Parameter"]["Value"].strip()
    raise ValueError("Set BRAIN_AUTH_TOKEN_SECRET or BRAIN_AUTH_TOKEN_PARAMETER")
