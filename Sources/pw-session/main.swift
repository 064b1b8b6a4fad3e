print("pw-session")
