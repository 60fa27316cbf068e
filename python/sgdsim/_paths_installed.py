"""The installed package's data folder: <prefix>/share/sgdsim, found from this file's place
(<prefix>/lib/python3/dist-packages/sgdsim/_paths.py), so a moved prefix keeps working."""
import os

_prefix = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
DATA_DIR = os.path.join(_prefix, "share", "sgdsim")
if not os.path.isdir(os.path.join(DATA_DIR, "models", "profiles")):
    DATA_DIR = ""  # sgdsim's own lookup (SGDSIM_DATA_DIR, /usr/share/sgdsim)
