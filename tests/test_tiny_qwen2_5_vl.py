"""The tiny random Qwen2.5-VL: what runs on CPU without torchvision, and what stops lmms-eval's ``qwen2_5_vl`` here.

Where torchvision is installed (the second venv ``make venv-tv`` builds, or a GPU machine), the wrapper itself runs
every group (benchmarks/qwen2_5_vl_tiny.py, tests/test_qwen2_5_vl_wrapper.py); in this project's venv it cannot, for
the two reasons the last test pins (docs/install.md).
"""

import importlib.util
import os

import pytest

HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory):
    from hanyi.models.tiny_qwen2_5_vl import build_tiny_qwen2_5_vl

    return build_tiny_qwen2_5_vl(str(tmp_path_factory.mktemp("tiny_qwen2_5_vl")))


def test_checkpoint_is_small_and_complete(tiny_qwen):
    names = set(os.listdir(tiny_qwen))
    assert {"config.json", "model.safetensors", "tokenizer.json", "preprocessor_config.json"} <= names
    assert {"video_preprocessor_config.json", "processor_config.json", "chat_template.jinja"} <= names
    assert os.path.getsize(os.path.join(tiny_qwen, "model.safetensors")) < 2_000_000


def test_model_generates_from_an_image_on_cpu_as_the_wrapper_loads_it(tiny_qwen):
    """The wrapper's steps without its processor: bfloat16 weights, ChatML from the saved template, the image
    processor transformers picks without torchvision, one pad token per merged patch, greedy generation."""
    import torch
    from PIL import Image
    from transformers import AutoImageProcessor, AutoTokenizer, Qwen2_5_VLForConditionalGeneration

    from hanyi.metrics.bbox import QWEN25_MAX_PIXELS, QWEN25_MIN_PIXELS, qwen25_input_size

    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(tiny_qwen, torch_dtype="bfloat16").eval()
    tok = AutoTokenizer.from_pretrained(tiny_qwen)
    proc = AutoImageProcessor.from_pretrained(tiny_qwen, min_pixels=QWEN25_MIN_PIXELS, max_pixels=QWEN25_MAX_PIXELS)
    image = Image.new("RGB", (48, 40), (200, 30, 30))
    pixels = proc(images=[image], return_tensors="pt")
    t, h, w = pixels["image_grid_thw"][0].tolist()
    assert (w * 14, h * 14) == qwen25_input_size(48, 40)  # the processor's resize (the wrapper's second one)
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "框出图中“唢呐”的位置"}]}]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>框出图中")
    text = text.replace("<|image_pad|>", "<|image_pad|>" * (t * h * w // 4))
    inputs = tok([text], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(
            **inputs,
            pixel_values=pixels["pixel_values"].to(torch.bfloat16),
            image_grid_thw=pixels["image_grid_thw"],
            max_new_tokens=4,
            do_sample=False,
        )
    assert out.shape[1] > inputs["input_ids"].shape[1]
    assert isinstance(tok.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True), str)


@pytest.mark.skipif(HAS_TORCHVISION, reason="torchvision present: tests/test_qwen2_5_vl_wrapper.py runs the wrapper")
def test_what_stops_lmms_eval_qwen2_5_vl_without_torchvision(tiny_qwen):
    """Pinned so that the docs' reason stays true: qwen_vl_utils imports torchvision when imported, and transformers'
    Qwen2.5-VL processor loads a torchvision-backed video processor even for image-only use."""
    from transformers import AutoProcessor

    with pytest.raises(ModuleNotFoundError, match="torchvision"):
        import qwen_vl_utils  # noqa: F401
    with pytest.raises(ImportError, match="(?i)torchvision"):
        AutoProcessor.from_pretrained(tiny_qwen)
