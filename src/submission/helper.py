"""Model construction, finetuning, pretraining and training: the assignment's glue code.

Every function returns its result; a function whose student part is still empty returns None (or, for
train, saves nothing), and src/run.py then names the function to implement and its part.
"""

import torch

from .dataset import NameDataset
from .model import GPT
from .trainer import Trainer, TrainerConfig, save_state_dict


def initialize_vanilla_model(mconf):
    """Part (c): the vanilla model.  Return a GPT (model.py) built from mconf, a GPTConfig whose
    perceiver flag is left off, so that every layer is an ordinary causal self-attention Block."""
    attention_model = None
    ### TODO: [part c]
    ### START CODE HERE ###
    attention_model = GPT(mconf)
    ### END CODE HERE ###
    return attention_model


def initialize_perceiver_model(mconf, bottleneck_dim=32):
    """Part (g): the perceiver model.  Return a GPT (model.py) built from mconf after switching the
    configuration to the perceiver variant: its `perceiver` flag on and its `bottleneck_dim` (the number
    m of basis rows, the bottleneck's length) set to the bottleneck_dim argument.  GPT then replaces its
    first and last Blocks with your DownProjectBlock and UpProjectBlock."""
    attention_model = None
    ### TODO: [part g]
    ### START CODE HERE ###
    mconf.perceiver = True
    mconf.bottleneck_dim = bottleneck_dim
    attention_model = GPT(mconf)
    ### END CODE HERE ###
    return attention_model


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4,
             writer=None):
    """Parts (c) and (f): set up finetuning on the birthplace questions; return (tconf, trainer_obj).

    - Pretrained or not: when reading_params_path is given (part f), the model starts from the state
      dict saved there, read onto the CPU (so that a file saved on a GPU loads anywhere) and loaded
      into model.  Without it (part c) the model starts from its random initialisation.
    - Training data: a NameDataset (dataset.py) built from pretrain_dataset, whose vocabulary it shares,
      and the text of the TSV file at finetune_corpus_path.
    - tconf: a TrainerConfig with exactly these values (the handout's):
        max_epochs      75 from scratch; 10 when starting from pretrained parameters
        batch_size      256
        learning_rate   finetune_lr
        lr_decay        True
        warmup_tokens   512 * 20
        final_tokens    200 * len(pretrain_dataset) * block_size
        num_workers     4
    - trainer_obj: a Trainer (trainer.py) for model on that NameDataset, with no test dataset.
    """
    tconf, trainer_obj = None, None
    ### TODO: [part c] and [part f]
    ### START CODE HERE ###
    max_epochs = 75
    if reading_params_path is not None:
        model.load_state_dict(torch.load(reading_params_path, map_location=torch.device("cpu")))
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
        finetune_dataset = NameDataset(f.read(), pretrain_dataset)
    trainer_obj = Trainer(model, finetune_dataset, None, tconf)
    ### END CODE HERE ###
    return tconf, trainer_obj


def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3, writer=None):
    """Part (f): set up span-corruption pretraining; return (tconf, trainer_obj).

    - Training data: pretrain_dataset itself (a CharCorruptionDataset over the pretraining corpus).
    - tconf: a TrainerConfig with exactly these values (the handout's):
        max_epochs      650
        batch_size      128
        learning_rate   pretrain_lr
        lr_decay        True
        warmup_tokens   512 * 20
        final_tokens    200 * len(pretrain_dataset) * block_size
        num_workers     4
    - trainer_obj: a Trainer (trainer.py) for model on pretrain_dataset, with no test dataset.
    """
    tconf, trainer_obj = None, None
    ### TODO: [part f]
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
    """Part (c): train, then keep the result.  Run the training that trainer_obj (from finetune or
    pretrain) was set up for, then save model's parameters (its state dict) to writing_params_path;
    trainer.save_state_dict writes it atomically, so an interrupted save never leaves half a file.
    Nothing is returned: src/run.py checks that the file was written."""
    ### TODO: [part c]
    ### START CODE HERE ###
    trainer_obj.train()
    save_state_dict(model, writing_params_path)
    ### END CODE HERE ###
    return
