from .attention import CausalCrossAttention, CausalSelfAttention
from .dataset import CharCorruptionDataset, NameDataset
from .helper import finetune, initialize_perceiver_model, initialize_vanilla_model, pretrain, train
from .model import GPT, GPTConfig
from .trainer import Trainer, TrainerConfig
from .utils import evaluate_places, sample
