"""The AWS model adapters against botocore's Stubber: the real request shapes of each service, checked by
botocore against its service model, and the documented response shapes."""

import io
import json

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from second_brain.adapters.embedder.bedrock import BedrockTitanEmbedder
from second_brain.adapters.embedder.sagemaker import SageMakerEmbedder
from second_brain.adapters.reranker.bedrock import BedrockReranker
from second_brain.adapters.reranker.sagemaker import SageMakerReranker
from second_brain.domain.errors import SemanticUnavailable


def client(service):
    made = boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    return made, Stubber(made)


def body(value, key="body"):
    raw = json.dumps(value).encode()
    return {key: StreamingBody(io.BytesIO(raw), len(raw))}


def test_titan_v2_embeds_one_text_per_call_at_the_configured_dimension():
    bedrock, stub = client("bedrock-runtime")
    for text, vector in (("alpha", [3.0] + [0.0] * 255), ("beta", [0.0, 4.0] + [0.0] * 254)):
        stub.add_response("invoke_model", {**body({"embedding": vector, "inputTextTokenCount": 1}),
                                           "contentType": "application/json"},
                          {"modelId": "amazon.titan-embed-text-v2:0", "accept": "application/json",
                           "contentType": "application/json",
                           "body": json.dumps({"inputText": text, "dimensions": 256, "normalize": True})})
    with stub:
        vectors = BedrockTitanEmbedder(bedrock, dimension=256).embed_batch(["alpha", "beta"])
    assert vectors.shape == (2, 256) and vectors.dtype == np.float32
    assert np.allclose(vectors[0, :2], [1, 0]) and np.allclose(vectors[1, :2], [0, 1])
    stub.assert_no_pending_responses()


def test_the_cloud_embedders_embed_a_query_like_a_stored_text():
    """Recall embeds its query with embed_query; Titan and the TEI endpoint take no query instruction."""
    bedrock, stub = client("bedrock-runtime")
    stub.add_response("invoke_model", {**body({"embedding": [0.0, 5.0] + [0.0] * 254, "inputTextTokenCount": 1}),
                                       "contentType": "application/json"},
                      {"modelId": "amazon.titan-embed-text-v2:0", "accept": "application/json",
                       "contentType": "application/json",
                       "body": json.dumps({"inputText": "pricing", "dimensions": 256, "normalize": True})})
    with stub:
        query = BedrockTitanEmbedder(bedrock, dimension=256).embed_query("pricing")
    assert query.shape == (256,) and np.allclose(query[:2], [0, 1])
    runtime, stub = client("sagemaker-runtime")
    stub.add_response("invoke_endpoint", {**body([[0.0, 2.0, 0.0]], "Body"), "ContentType": "application/json"},
                      {"EndpointName": "bge-small", "ContentType": "application/json", "Accept": "application/json",
                       "Body": json.dumps({"inputs": ["pricing"], "normalize": True, "truncate": True})})
    with stub:
        assert np.allclose(SageMakerEmbedder(runtime, "bge-small", dimension=3).embed_query("pricing"), [0, 1, 0])


def test_titan_refuses_a_dimension_it_does_not_offer_and_reports_failures():
    with pytest.raises(ValueError, match="256, 512, 1024"):
        BedrockTitanEmbedder(object(), dimension=384)
    bedrock, stub = client("bedrock-runtime")
    stub.add_client_error("invoke_model", "ThrottlingException", "Too many requests")
    with stub, pytest.raises(SemanticUnavailable, match="Throttling"):
        BedrockTitanEmbedder(bedrock, dimension=512).embed_batch(["x"])


def test_sagemaker_embedder_batches_and_normalises():
    runtime, stub = client("sagemaker-runtime")
    texts = [f"text {n}" for n in range(40)]
    for chunk in (texts[:32], texts[32:]):
        stub.add_response("invoke_endpoint", {**body([[2.0, 0.0, 0.0]] * len(chunk), "Body"),
                                              "ContentType": "application/json"},
                          {"EndpointName": "bge-small", "ContentType": "application/json", "Accept": "application/json",
                           "Body": json.dumps({"inputs": chunk, "normalize": True, "truncate": True})})
    with stub:
        vectors = SageMakerEmbedder(runtime, "bge-small", dimension=3).embed_batch(texts)
    assert vectors.shape == (40, 3) and np.allclose(vectors[:, 0], 1.0)
    runtime, stub = client("sagemaker-runtime")
    stub.add_response("invoke_endpoint", {**body([[1.0, 0.0]], "Body")}, {"EndpointName": "bge-small",
                      "ContentType": ANY, "Accept": ANY, "Body": ANY})
    with stub, pytest.raises(SemanticUnavailable, match="shape"):
        SageMakerEmbedder(runtime, "bge-small", dimension=3).embed_batch(["one"])


def test_bedrock_rerank_asks_cohere_for_every_passage_and_maps_scores_back():
    agent, stub = client("bedrock-agent-runtime")
    arn = "arn:aws:bedrock:us-east-1::foundation-model/cohere.rerank-v3-5:0"
    stub.add_response("rerank", {"results": [{"index": 1, "relevanceScore": 0.9}, {"index": 0, "relevanceScore": 0.2}]},
                      {"queries": [{"type": "TEXT", "textQuery": {"text": "blue bike"}}],
                       "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT",
                                                                               "textDocument": {"text": t}}}
                                   for t in ("red car", "blue bike")],
                       "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                           "numberOfResults": 2, "modelConfiguration": {"modelArn": arn}}}})
    with stub:
        assert BedrockReranker(agent, "us-east-1").rerank("blue bike", ["red car", "blue bike"]) == [0.2, 0.9]


def test_sagemaker_reranker_maps_tei_answers_back_to_passages():
    runtime, stub = client("sagemaker-runtime")
    stub.add_response("invoke_endpoint", body([{"index": 2, "score": 0.8}, {"index": 0, "score": 0.1},
                                               {"index": 1, "score": 0.05}], "Body"),
                      {"EndpointName": "reranker", "ContentType": "application/json", "Accept": "application/json",
                       "Body": json.dumps({"query": "q", "texts": ["a", "b", "c"], "truncate": True})})
    with stub:
        assert SageMakerReranker(runtime, "reranker").rerank("q", ["a", "b", "c"]) == [0.1, 0.05, 0.8]
