"""Model construction, finetuning, pretraining and training: the assignment's glue code.

Every function returns its result; a function whose student part is still empty returns None,
and src/run.py says which function is missing.
"""

from .dataset import NameDataset
from .model import GPT
from .trainer import Trainer, TrainerConfig, save_state_dict
from .utils import load_params


def initialize_vanilla_model(mconf):
    """Part (c): return a GPT built from the GPTConfig mconf (the vanilla variant)."""
    attention_model = None
    ### START CODE HERE ###
    attention_model = GPT(mconf)
    ### END CODE HERE ###
    return attention_model


def initialize_perceiver_model(mconf, bottleneck_dim=32):
    """Part (g): set mconf.perceiver = True and mconf.bottleneck_dim = bottleneck_dim, then return
    a GPT built from mconf (the perceiver variant)."""
    attention_model = None
    ### START CODE HERE ###
    mconf.perceiver = True
    mconf.bottleneck_dim = bottleneck_dim
    attention_model = GPT(mconf)
    ### END CODE HERE ###
    return attention_model


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4,
             writer=None):
    """Part (c) (and (f)): prepare finetuning on the birthplace TSV at finetune_corpus_path.

    - If reading_params_path is not None, first load those (pretrained) parameters into model with
      utils.load_params(model, reading_params_path) (it maps GPU-saved tensors to the model's device).
    - Build the training data: NameDataset(pretrain_dataset, <the text of finetune_corpus_path>).
    - TrainerConfig, exactly:
        without pretrained params: max_epochs=75, batch_size=256, learning_rate=finetune_lr,
            lr_decay=True, warmup_tokens=512*20, final_tokens=200*len(pretrain_dataset)*block_size,
            num_workers=4
        with pretrained params: the same, except max_epochs=10
    - trainer_obj = Trainer(model, <the NameDataset>, None, tconf)
    Returns (tconf, trainer_obj).
    """
    tconf, trainer_obj = None, None
    ### START CODE HERE ###
    max_epochs = 75
    if reading_params_path is not None:
        load_params(model, reading_params_path)
        max_epochs = 10
    tconf = TrainerConfig(
        max_epochs=max_epochs,
        batch_size=256,
        learning_rate=finetune_lr,
        lr_decay=True,
        warmup_tokens=512 * 20,
        final_tokens=200 * len(pretrain_dataset) * block_size,
        num_workers=4,
        writer=writer,
    )
    with open(finetune_corpus_path, encoding="utf-8") as f:
        finetune_dataset = NameDataset(pretrain_dataset, f.read())
    trainer_obj = Trainer(model, finetune_dataset, None, tconf)
    ### END CODE HERE ###
    return tconf, trainer_obj


def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3, writer=None):
    """Part (f): prepare span-corruption pretraining on pretrain_dataset (a CharCorruptionDataset).

    TrainerConfig, exactly: max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
    warmup_tokens=512*20, final_tokens=200*len(pretrain_dataset)*block_size, num_workers=4.
    trainer_obj = Trainer(model, pretrain_dataset, None, tconf).  Returns (tconf, trainer_obj).
    """
    tconf, trainer_obj = None, None
    ### START CODE HERE ###
    tconf = TrainerConfig(
        max_epochs=650,
        batch_size=128,
        learning_rate=pretrain_lr,
        lr_decay=True,
        warmup_tokens=512 * 20,
        final_tokens=200 * len(pretrain_dataset) * block_size,
        num_workers=4,
        writer=writer,
    )
    trainer_obj = Trainer(model, pretrain_dataset, None, tconf)
    ### END CODE HERE ###
    return tconf, trainer_obj


def train(model, writing_params_path, trainer_obj):
    """Run trainer_obj.train(), then save model's parameters to writing_params_path with
    trainer.save_state_dict(model, writing_params_path) (an atomic torch.save of the state dict)."""
    ### START CODE HERE ###
    trainer_obj.train()
    save_state_dict(model, writing_params_path)
    ### END CODE HERE ###
    return
