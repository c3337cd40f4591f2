"""`torchlint verify`: run the original and the fixed script side by side and compare."""
