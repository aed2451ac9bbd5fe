"""A real ONNX cross-encoder small enough to build inside a test: it scores a pair by one word's count."""

from second_brain.adapters.embedder import local


def write_cross_encoder(directory, relevant_word: str) -> None:
    """A real ONNX graph scoring each pair by how often one word's token appears in it."""
    import onnx
    from onnx import TensorProto, helper
    from tokenizers import BertWordPieceTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = BertWordPieceTokenizer(str(local.VOCAB), lowercase=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    target = tokenizer.token_to_id(relevant_word)
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(
        [
            helper.make_node("Equal", ["input_ids", "target"], ["hit"]),
            helper.make_node("Cast", ["hit"], ["hitf"], to=TensorProto.FLOAT),
            helper.make_node("ReduceSum", ["hitf", "axes"], ["logits"], keepdims=1),
        ],
        "count_word", ids, [logits],
        initializer=[helper.make_tensor("target", TensorProto.INT64, [], [target]),
                     helper.make_tensor("axes", TensorProto.INT64, [1], [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(directory / "model.onnx"))
