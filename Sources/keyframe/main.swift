print("kf")
