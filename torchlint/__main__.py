from torchlint.cli import main

main()
